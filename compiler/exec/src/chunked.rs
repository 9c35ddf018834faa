//! A growable array in fixed-size chunks: pushing never moves what is already stored, so a
//! table of millions of cells grows without the copy (and the doubled peak memory) of a `Vec`.

use std::ops::{Index, IndexMut};

/// Elements per chunk: a power of two, so an index splits with a shift and a mask.
const CHUNK_BITS: u32 = 14;
const CHUNK: usize = 1 << CHUNK_BITS;

#[derive(Debug)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
    /// How many chunks from the front `release_below` freed.
    released: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), len: 0, released: 0 }
    }
}

impl<T> Chunked<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks.last_mut().expect("a chunk was just made").push(value);
        self.len += 1;
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Frees the chunks that hold only elements below `index`, for a table read once from the
    /// front while it is taken apart: those elements must not be read again.
    pub(crate) fn release_below(&mut self, index: usize) {
        let below = (index >> CHUNK_BITS).min(self.chunks.len());
        for chunk in &mut self.chunks[self.released.min(below)..below] {
            *chunk = Vec::new();
        }
        self.released = self.released.max(below);
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        &self.chunks[index >> CHUNK_BITS][index & (CHUNK - 1)]
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, index: usize) -> &mut T {
        &mut self.chunks[index >> CHUNK_BITS][index & (CHUNK - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::Chunked;

    #[test]
    fn indexes_across_chunks() {
        let mut chunked = Chunked::default();
        for i in 0..40_000_u32 {
            chunked.push(i);
        }
        assert_eq!(chunked.len(), 40_000);
        assert_eq!(chunked[0], 0);
        assert_eq!(chunked[16_384], 16_384);
        assert_eq!(chunked[39_999], 39_999);
        chunked[20_000] = 7;
        assert_eq!(chunked.iter().filter(|v| **v == 7).count(), 2);
        chunked.release_below(35_000);
        assert_eq!(chunked.iter().count(), 40_000 - 32_768, "the two chunks below 32,768 are freed");
        assert_eq!(chunked[32_768], 32_768);
        assert_eq!(chunked[39_999], 39_999);
    }
}
