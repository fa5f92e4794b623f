//! Finding the built-in consent prompt's buttons on the X screen, for real clicks.

use lineup_host::platform::PromptSnapshot;

use crate::x11::X11;

/// The root coordinates of the centre of button `id` (`allow`, `always`, `deny`) of the prompt
/// `window`, from what the prompt page reported in `snapshot`.
pub fn button(
    x: &X11,
    window: u32,
    snapshot: &PromptSnapshot,
    id: &str,
) -> Result<(i16, i16), String> {
    let [bx, by, bw, bh] = snapshot
        .buttons
        .iter()
        .find(|(b, _)| b == id)
        .map(|(_, r)| *r)
        .ok_or_else(|| format!("no button {id}: {:?}", snapshot.buttons))?;
    let (ox, oy) = x.window_origin(window)?;
    let cx = i16::try_from((bx + bw / 2.0).round() as i64).unwrap_or(0);
    let cy = i16::try_from((by + bh / 2.0).round() as i64).unwrap_or(0);
    Ok((ox + cx, oy + cy))
}
