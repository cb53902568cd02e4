//! PNG output with correctly spaced text. plotters 0.3.7 draws ab_glyph text at each glyph's
//! advance but drops the glyph's left side bearing, so narrow glyphs sit flush left and text
//! reads "cl1 00k; offlin e". This backend wraps the bitmap backend, delegates every shape to
//! it, and draws each glyph of a text at its true position (advance, kerning and bearing).

use ab_glyph::{point, Font, FontRef, ScaleFont};
use plotters::backend::{BitMapBackend, DrawingBackend};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontStyle,
};

type Error<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

/// The bitmap backend with its text drawn by [`draw_glyphs`].
pub struct KernedBitmap<'a> {
    inner: BitMapBackend<'a>,
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

impl std::fmt::Debug for KernedBitmap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernedBitmap").finish_non_exhaustive()
    }
}

impl<'a> KernedBitmap<'a> {
    /// Wraps `inner`, whose text is then drawn at the font's glyph positions.
    pub fn new(inner: BitMapBackend<'a>) -> Self {
        // The embedded DejaVu Sans faces are valid TrueType (the crate ships them for this).
        let face = |b: &'static [u8]| FontRef::try_from_slice(b).expect("DejaVu Sans parses");
        KernedBitmap {
            inner,
            regular: face(dejavu::sans::regular()),
            bold: face(dejavu::sans::bold()),
        }
    }
}

/// Calls `pixel(x, y, coverage)` for every covered pixel of `text` in `font` at `size` pixels,
/// with the pen starting at x = 0 and the baseline at y = size / 2 (plotters' convention, so
/// the text box and anchoring stay those of `layout_box`).
pub fn draw_glyphs(
    font: &FontRef<'_>,
    size: f32,
    text: &str,
    mut pixel: impl FnMut(i32, i32, f32),
) {
    let scaled = font.as_scaled(size);
    let mut caret = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(p) = prev {
            caret += scaled.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(size, point(caret, size / 2.0));
        if let Some(outline) = scaled.outline_glyph(glyph) {
            let b = outline.px_bounds();
            outline
                .draw(|x, y, cov| pixel(b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cov));
        }
        caret += scaled.h_advance(id);
    }
}

impl<'a> DrawingBackend for KernedBitmap<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error<'a>> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> Result<(), Error<'a>> {
        self.inner.draw_pixel(p, c)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        ul: BackendCoord,
        br: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_rect(ul, br, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.inner.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.inner.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Error<'a>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    /// plotters' own anchoring and rotation around [`draw_glyphs`].
    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Result<(), Error<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let font = match style.style() {
            FontStyle::Bold => self.bold.clone(),
            _ => self.regular.clone(),
        };
        let trans = style.transform();
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        draw_glyphs(&font, style.size() as f32, text, |x, y, cov| {
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if result.is_ok() && x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                result = self.inner.draw_pixel(
                    (x, y),
                    BackendColor {
                        alpha: color.alpha * f64::from(cov.clamp(0.0, 1.0)),
                        rgb: color.rgb,
                    },
                );
            }
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::draw::{register_fonts, text};
    use plotters::prelude::*;

    /// Left edges of the runs of inked columns of an RGB buffer (one run per glyph here).
    fn glyph_starts(buf: &[u8], (w, h): (u32, u32)) -> Vec<i32> {
        let inked = |x: u32| (0..h).any(|y| buf[((y * w + x) * 3) as usize] < 160);
        let mut starts = Vec::new();
        let mut was = false;
        for x in 0..w {
            let now = inked(x);
            if now && !was {
                starts.push(x as i32);
            }
            was = now;
        }
        starts
    }

    fn render(kerned: bool, s: &str) -> Vec<i32> {
        // `kerned: false` draws with plotters' own text, to compare by hand.
        register_fonts().unwrap();
        let size = (400, 80);
        let mut buf = vec![0u8; (size.0 * size.1 * 3) as usize];
        {
            let bitmap = BitMapBackend::with_buffer(&mut buf, size);
            let style = text(40.0);
            if kerned {
                let root = KernedBitmap::new(bitmap).into_drawing_area();
                root.fill(&WHITE).unwrap();
                root.draw(&Text::new(s.to_owned(), (10, 10), style))
                    .unwrap();
                root.present().unwrap();
            } else {
                let root = bitmap.into_drawing_area();
                root.fill(&WHITE).unwrap();
                root.draw(&Text::new(s.to_owned(), (10, 10), style))
                    .unwrap();
                root.present().unwrap();
            }
        }
        glyph_starts(&buf, size)
    }

    /// Where the font puts each glyph's left edge: pen position plus left side bearing.
    fn font_starts(s: &str, size: f32) -> Vec<f32> {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
        let scaled = font.as_scaled(size);
        let mut caret = 0f32;
        s.chars()
            .map(|c| {
                let id = scaled.glyph_id(c);
                let g = id.with_scale_and_position(size, point(caret, 0.0));
                caret += scaled.h_advance(id);
                scaled.outline_glyph(g).unwrap().px_bounds().min.x
            })
            .collect()
    }

    #[test]
    fn glyphs_sit_where_the_font_puts_them() {
        // "1" has a wide left bearing, "0" a narrow one: the case that rendered as "1 00".
        let s = "1001";
        let want = font_starts(s, 40.0);
        let got = render(true, s);
        assert_eq!(got.len(), 4, "{got:?}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate().skip(1) {
            let (g, w) = (g - got[0], w - want[0]);
            assert!(
                (g as f32 - w).abs() <= 1.5,
                "glyph {i}: {g} px after the first, font says {w:.1}: {got:?}"
            );
        }
    }
}
