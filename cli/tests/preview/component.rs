//! `lineup preview` of a standard component (R-STD-1, R-STD-9): the payload is checked as the
//! host checks it (a refusal names the field, exit 1, nothing shown), and `--screenshot` writes
//! the built-in renderer's window in the theme asked for: the background and the confirm
//! button's accent are the theme's colours, in light and in dark.

use super::*;

fn component_file(name: &str, payload: &str) -> PathBuf {
    let dir = folder(name, &[("component.json", payload)]);
    dir.join("component.json")
}

const CONFIRM: &str = r#"{"instance_id":"k1","component":{"id":"confirm","version":"1","props":{"title":"Deploy to production?","confirm_label":"Deploy"}}}"#;

#[test]
fn r_std_9_a_component_previews_in_the_themes_colours_and_a_refused_one_names_its_field() {
    display();
    let file = component_file("component-confirm", CONFIRM);
    for (theme, background, accent) in [
        ("light", [0xff, 0xff, 0xff], [0x0a, 0x66, 0xd8]),
        ("dark", [0x1e, 0x1f, 0x22], [0x5e, 0xa1, 0xff]),
    ] {
        let png = file.with_file_name(format!("confirm-{theme}.png"));
        let (code, stdout) = run_preview(
            &file,
            &["--screenshot", png.to_str().unwrap(), "--theme", theme],
        );
        assert_eq!(code, Some(0), "{stdout}");
        assert!(stdout.contains("confirm v1 k1"), "{stdout}");
        let (width, height, corner) = pixel(&png, 3, 3);
        assert_eq!(&corner[..3], &background, "{theme}: the background");
        // The confirm button fills the accent: 120 × 34 px, 20 px from the right and 10 px
        // from the bottom; its left edge, clear of the label.
        let (_, _, button) = pixel(&png, width - 20 - 120 + 8, height - 10 - 17);
        assert_eq!(&button[..3], &accent, "{theme}: the confirm button");
    }

    let refused = component_file(
        "component-refused",
        r#"{"instance_id":"k1","component":{"id":"confirm","version":"1","props":{"title":""}}}"#,
    );
    let (code, stdout) = run_preview(&refused, &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(r#""field":"payload.component.props.title""#)
            && stdout.contains("not opened"),
        "{stdout}"
    );
}
