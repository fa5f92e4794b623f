//! What a window shows on screen, read back as pixels (`window_pixels`,
//! `SurfaceView::screen_pixels`): for an embedder's smoke tests (do its Surfaces and its own
//! widgets show where it placed them?) and for the examples' `--check`.

/// The pixels of a window's content area as the screen shows them, in RGB, row by row.
#[derive(Clone, PartialEq, Eq)]
pub struct WindowPixels {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl std::fmt::Debug for WindowPixels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowPixels")
            .field("width", &self.width)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}

impl WindowPixels {
    /// Pixels of `width` × `height` from `rgb`, three bytes each, row by row; `None` when the
    /// length does not fit.
    pub fn new(width: u32, height: u32, rgb: Vec<u8>) -> Option<Self> {
        let len = usize::try_from(u64::from(width) * u64::from(height) * 3).ok()?;
        (rgb.len() == len).then_some(Self { width, height, rgb })
    }

    /// The width in physical pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The height in physical pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The pixels, three bytes each (red, green, blue), row by row.
    pub fn rgb(&self) -> Vec<u8> {
        self.rgb.clone()
    }

    /// How many bytes the pixels hold.
    pub fn byte_len(&self) -> usize {
        self.rgb.len()
    }

    /// The pixel at (`x`, `y`) from the top left, when inside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let at = usize::try_from((u64::from(y) * u64::from(self.width) + u64::from(x)) * 3).ok()?;
        let p = self.rgb.get(at..at + 3)?;
        Some([p[0], p[1], p[2]])
    }

    /// How many pixels of the rectangle at (`x`, `y`) of `width` × `height` (cut to the window)
    /// are within `tolerance` of `rgb` in every channel.
    pub fn count_near(&self, rect: [u32; 4], rgb: [u8; 3], tolerance: u8) -> usize {
        let [x, y, width, height] = rect;
        let near = |p: [u8; 3]| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= tolerance);
        (y..y.saturating_add(height).min(self.height))
            .flat_map(|row| (x..x.saturating_add(width).min(self.width)).map(move |col| (col, row)))
            .filter_map(|(col, row)| self.pixel(col, row))
            .filter(|p| near(*p))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_are_read_and_counted_inside_the_window_only() {
        let rgb = [[0u8, 192, 0], [10, 10, 10], [0, 190, 2], [255, 255, 255]].concat();
        let pixels = WindowPixels::new(2, 2, rgb).unwrap_or_else(|| unreachable!());
        assert_eq!(pixels.pixel(1, 1), Some([255, 255, 255]));
        assert_eq!(pixels.pixel(2, 0), None);
        assert_eq!(pixels.count_near([0, 0, 2, 2], [0, 192, 0], 4), 2);
        assert_eq!(pixels.count_near([0, 0, 9, 9], [0, 192, 0], 1), 1);
        assert_eq!(pixels.count_near([1, 0, 1, 1], [0, 192, 0], 4), 0);
        assert!(WindowPixels::new(2, 2, vec![0; 11]).is_none());
    }
}
