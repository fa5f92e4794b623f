/**
 * The LineUp Surface bridge (lineup.surface.v1): the one global a Surface's script may use to talk
 * to its host. The host defines it before the Surface's own script runs; it cannot be replaced.
 *
 * A Surface runs without network access: it shows the state the agent sends and reports the
 * user's intent as events.
 *
 * @example
 * LineUpSurface.onState((state) => {
 *   document.querySelector('#temp')!.textContent = String(state.temperature);
 * });
 * document.querySelector('#refresh')!.addEventListener('click', () => {
 *   LineUpSurface.event('refresh', { unit: 'c' });
 * });
 * // The content's height (not scrollHeight, which never goes below the window's): it can shrink.
 * LineUpSurface.resize(Math.ceil(document.documentElement.getBoundingClientRect().height));
 */
interface LineUpSurfaceBridge {
  /**
   * Reports a user action to the agent as `lineup.v1.ui.event` `{instance_id, event, data}`.
   *
   * The host drops, and counts, an event whose name does not match
   * `[A-Za-z][A-Za-z0-9._:-]{0,63}`, whose data is not a JSON object smaller than 16 KiB, or whose
   * name is `close` (only the user closes a Surface).
   *
   * @param name - the event name, e.g. `"refresh"`.
   * @param data - a JSON object; `{}` when omitted.
   * @throws {TypeError} when `name` is not a string.
   */
  event(name: string, data?: { [key: string]: unknown }): void;

  /**
   * Subscribes to the Surface's state: a JSON object the agent sends with the Surface and replaces
   * as a whole with every patch. If a state has already arrived, `callback` gets it soon after
   * subscribing (in a microtask), then every later one. An exception in one subscriber does not
   * stop the others.
   *
   * @param callback - called with each state.
   * @returns a function that unsubscribes `callback`.
   * @throws {TypeError} when `callback` is not a function.
   */
  onState<State extends object = { [key: string]: unknown }>(
    callback: (state: State) => void,
  ): () => void;

  /**
   * Asks the host to give the Surface this height, in CSS pixels; the host decides how to apply it.
   *
   * @param height - the content height; converted with `Number(height)`.
   * @throws {TypeError} when the height is not a finite number.
   */
  resize(height: number): void;
}

/** The LineUp Surface bridge; see {@link LineUpSurfaceBridge}. */
declare const LineUpSurface: Readonly<LineUpSurfaceBridge>;

interface Window {
  /** The LineUp Surface bridge; see {@link LineUpSurfaceBridge}. */
  readonly LineUpSurface: Readonly<LineUpSurfaceBridge>;
}
