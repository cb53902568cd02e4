//! Drawing: every figure renders to an SVG string and a PNG file from the same code, with the
//! embedded DejaVu Sans font and the Okabe–Ito colour-blind-safe palette.

use std::path::Path;
use std::sync::Once;

use bench_core::{BenchError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::png::KernedBitmap;

/// The font family every text is drawn in (registered from the embedded TTF).
pub const FONT: &str = "sans-serif";

/// Okabe & Ito (2008): eight colours distinguishable with every common colour-vision deficiency.
/// Yellow is last: it is hard to see on white and only used when everything else is taken.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The colour of the `i`-th series.
pub fn colour(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// Registers the embedded font once: text then renders with no system fonts.
pub fn register_fonts() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut outcome = Ok(());
    ONCE.call_once(|| {
        let regular =
            plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let bold = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
        if regular.is_err() || bold.is_err() {
            outcome = Err(BenchError::Other(
                "the embedded DejaVu Sans font did not load".into(),
            ));
        }
    });
    outcome
}

/// Maps a drawing error to the core error, by its message (not its `Debug` form).
pub fn draw_err<E: std::fmt::Display>(e: E) -> BenchError {
    BenchError::Other(format!("drawing a figure: {e}"))
}

/// A figure that draws itself on any plotters backend.
pub trait Figure {
    /// File stem (`fig7_cost_accuracy`, ...).
    fn name(&self) -> &str;
    /// Canvas size in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws the figure on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>;
}

/// Draws `fig` as SVG (returned) and as a PNG written to `png`. The PNG is drawn and encoded in
/// memory and written here, so a failed write (a full disk) is an error that says so, never a
/// silently short file.
pub fn render<F: Figure>(fig: &F, png: &Path) -> Result<String> {
    register_fonts()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, fig.size()).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        fig.draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    let (w, h) = fig.size();
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root =
            KernedBitmap::new(BitMapBackend::with_buffer(&mut pixels, (w, h))).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        fig.draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    let what = format!("writing figure {} ({})", fig.name(), png.display());
    let mut bytes = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut bytes),
        &pixels,
        w,
        h,
        image::ColorType::Rgb8,
    )
    .map_err(|e| BenchError::Other(format!("{what}: {e}")))?;
    std::fs::write(png, bytes).map_err(|e| BenchError::io(what, e))?;
    Ok(svg)
}

/// A token count for an axis or label: 950, 12k, 1.2M.
pub fn fmt_tokens(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || v == v.round() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Text style of `size` pixels in the embedded font.
pub fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font()).color(&BLACK)
}

/// Draws `s` anchored at `pos` (pixel coordinates of `area`).
pub fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    pos: (i32, i32),
    style: &TextStyle<'_>,
    h: HPos,
    v: VPos,
) -> Result<()> {
    let st = style.pos(Pos::new(h, v));
    area.draw(&Text::new(s.to_owned(), pos, st))
        .map_err(draw_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blank figure: only its file is of interest.
    struct Blank;

    impl Figure for Blank {
        fn name(&self) -> &str {
            "blank"
        }
        fn size(&self) -> (u32, u32) {
            (40, 30)
        }
        fn draw<DB: DrawingBackend>(&self, _: &DrawingArea<DB, Shift>) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn h25_a_full_disk_is_named_as_a_person_reads_it() {
        // /dev/full accepts the open and fails every write with ENOSPC, as a full disk does.
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("blank.png");
        std::os::unix::fs::symlink("/dev/full", &png).unwrap();
        let e = render(&Blank, &png).unwrap_err().to_string();
        assert!(e.contains("writing figure blank"), "{e}");
        assert!(e.contains("No space left on device"), "{e}");
        assert!(!e.contains("IoError") && !e.contains("Custom {"), "{e}");
    }
}
