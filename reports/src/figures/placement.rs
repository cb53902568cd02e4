//! Series styles and direct labels for scatter figures: a (colour, marker) per series that stays
//! unique up to 24 series of a kind, and label boxes placed next to their own point without
//! covering another label or any marker (a label that cannot be placed so is left to the legend).

use plotters::prelude::*;

use super::draw::draw_err;
use bench_core::Result;

/// Marker shapes; each kind of series has its own set, so kinds never share a style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Marker {
    /// A circle.
    Circle,
    /// An upward triangle.
    Triangle,
    /// A diamond.
    Diamond,
    /// A downward triangle.
    InvertedTriangle,
    /// A square.
    Square,
}

/// Draws `marker` centred on pixel `(x, y)` of `area`.
pub fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    marker: Marker,
    colour: RGBColor,
) -> Result<()> {
    let style = colour.filled();
    match marker {
        Marker::Circle => area.draw(&Circle::new((x, y), 6, style)),
        Marker::Square => area.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], style)),
        Marker::Triangle => area.draw(&Polygon::new(
            vec![(x, y - 7), (x + 7, y + 5), (x - 7, y + 5)],
            style,
        )),
        Marker::InvertedTriangle => area.draw(&Polygon::new(
            vec![(x, y + 7), (x + 7, y - 5), (x - 7, y - 5)],
            style,
        )),
        Marker::Diamond => area.draw(&Polygon::new(
            vec![(x, y - 7), (x + 7, y), (x, y + 7), (x - 7, y)],
            style,
        )),
    }
    .map_err(draw_err)
}

/// An axis-aligned pixel box: (left, top, right, bottom).
pub type Rect = (i32, i32, i32, i32);

/// A pixel position (x, y) or a size (width, height).
pub type Px = (i32, i32);

/// Whether two boxes share any area.
pub fn overlaps(a: &Rect, b: &Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Half the side of the box a marker occupies (markers are drawn within 7 px of their centre).
pub const MARKER_HALF: i32 = 9;

/// Places a `size` label for each `(point, size)` in order: right of its point, then left, then
/// one or two lines up or down, always within a line or two of its own point; never over a
/// marker (`markers`), another placed label, or outside `bounds` (width, height). `None`: no
/// such place, the legend names the point.
pub fn place_labels(labels: &[(Px, Px)], markers: &[Px], bounds: Px) -> Vec<Option<Rect>> {
    let mut taken: Vec<Rect> = markers
        .iter()
        .map(|&(x, y)| {
            (
                x - MARKER_HALF,
                y - MARKER_HALF,
                x + MARKER_HALF,
                y + MARKER_HALF,
            )
        })
        .collect();
    labels
        .iter()
        .map(|&((px, py), (w, h))| {
            let gap = MARKER_HALF + 3;
            let mut found = None;
            'search: for line in [0, -1, 1, -2, 2] {
                let top = py - h / 2 + line * (h + 2);
                for left in [px + gap, px - gap - w] {
                    let b = (left, top, left + w, top + h);
                    let inside = b.0 >= 2 && b.1 >= 2 && b.2 <= bounds.0 - 2 && b.3 <= bounds.1 - 2;
                    if inside && !taken.iter().any(|t| overlaps(&b, t)) {
                        found = Some(b);
                        break 'search;
                    }
                }
            }
            if let Some(b) = found {
                taken.push(b);
            }
            found
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix-style seeded integers, so the test needs no RNG crate.
    fn next(s: &mut u64) -> u64 {
        *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn placed_labels_never_overlap_labels_or_markers() {
        let bounds = (540, 380);
        for seed in 0..200u64 {
            let mut s = seed;
            // Points crowded into a corner, as offline runs put every strategy near each other.
            let n = 5 + (next(&mut s) % 25) as usize;
            let spread = 40 + (next(&mut s) % 300) as i32;
            let points: Vec<(i32, i32)> = (0..n)
                .map(|_| {
                    (
                        20 + (next(&mut s) % spread as u64) as i32,
                        20 + (next(&mut s) % (spread as u64).min(340)) as i32,
                    )
                })
                .collect();
            let labels: Vec<_> = points
                .iter()
                .map(|&p| (p, (30 + (next(&mut s) % 90) as i32, 14)))
                .collect();
            let placed = place_labels(&labels, &points, bounds);
            let boxes: Vec<(usize, Rect)> = placed
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.map(|b| (i, b)))
                .collect();
            for (k, (i, a)) in boxes.iter().enumerate() {
                assert!(a.0 >= 0 && a.1 >= 0 && a.2 <= bounds.0 && a.3 <= bounds.1);
                for (j, b) in &boxes[..k] {
                    assert!(!overlaps(a, b), "seed {seed}: labels {j} and {i} overlap");
                }
                for (m, &(x, y)) in points.iter().enumerate() {
                    let mb = (
                        x - MARKER_HALF,
                        y - MARKER_HALF,
                        x + MARKER_HALF,
                        y + MARKER_HALF,
                    );
                    assert!(
                        !overlaps(a, &mb),
                        "seed {seed}: label {i} covers marker {m}"
                    );
                }
                // Next to its own point: within two lines vertically, beside it horizontally.
                let (px, py) = labels[*i].0;
                assert!((a.1 + a.3) / 2 - py <= 2 * 16 + 1 && py - (a.1 + a.3) / 2 <= 2 * 16 + 1);
                assert!(a.0 == px + MARKER_HALF + 3 || a.2 == px - MARKER_HALF - 3);
            }
        }
        // Points far apart are all labelled, right of themselves.
        let far = [(50, 50), (250, 150), (100, 300)];
        let labels: Vec<_> = far.iter().map(|&p| (p, (80, 14))).collect();
        let placed = place_labels(&labels, &far, bounds);
        for (p, b) in far.iter().zip(&placed) {
            assert_eq!(b.map(|b| b.0), Some(p.0 + MARKER_HALF + 3), "{placed:?}");
        }
    }
}
