//! Little-endian fixed integers and LEB128 varints, the primitives of every format.
//!
//! Decoding goes through [`Decoder`], a bounds-checked cursor: a short or malformed
//! input yields `None`, never a panic, and callers turn that into `Error::Corruption`
//! with the file offset they know.

/// Longest encoding of a `u32` varint.
pub const MAX_VARINT32_LEN: usize = 5;
/// Longest encoding of a `u64` varint.
pub const MAX_VARINT64_LEN: usize = 10;

/// Appends `v` as a little-endian u32.
#[inline]
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as a little-endian u64.
#[inline]
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as a LEB128 varint.
#[inline]
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

/// Appends `v` as a LEB128 varint.
#[inline]
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes `put_varint64(v)` appends.
#[inline]
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Appends a varint length followed by the bytes.
pub fn put_length_prefixed(dst: &mut Vec<u8>, bytes: &[u8]) {
    put_varint64(dst, bytes.len() as u64);
    dst.extend_from_slice(bytes);
}

/// Reads a little-endian u32 from the first 4 bytes of `src`.
#[inline]
pub fn decode_fixed32(src: &[u8]) -> Option<u32> {
    let bytes: [u8; 4] = src.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(bytes))
}

/// Reads a little-endian u64 from the first 8 bytes of `src`.
#[inline]
pub fn decode_fixed64(src: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = src.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// A bounds-checked reading cursor over a byte slice.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts reading at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// True when everything has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Reads a little-endian u32.
    pub fn fixed32(&mut self) -> Option<u32> {
        let v = decode_fixed32(self.remaining())?;
        self.pos += 4;
        Some(v)
    }

    /// Reads a little-endian u64.
    pub fn fixed64(&mut self) -> Option<u64> {
        let v = decode_fixed64(self.remaining())?;
        self.pos += 8;
        Some(v)
    }

    /// Reads a varint that must fit in 32 bits.
    #[inline]
    pub fn varint32(&mut self) -> Option<u32> {
        // Fast path: one byte, the common case for block entry lengths.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Some(u32::from(b));
            }
        }
        let v = self.varint_bounded(MAX_VARINT32_LEN)?;
        u32::try_from(v).ok()
    }

    /// Reads a varint of up to 64 bits.
    #[inline]
    pub fn varint64(&mut self) -> Option<u64> {
        self.varint_bounded(MAX_VARINT64_LEN)
    }

    fn varint_bounded(&mut self, max_len: usize) -> Option<u64> {
        let mut result: u64 = 0;
        for i in 0..max_len {
            let b = *self.buf.get(self.pos + i)?;
            let shift = 7 * i as u32;
            let bits = u64::from(b & 0x7f);
            // Reject encodings whose bits fall off the top of a u64.
            if shift == 63 && bits > 1 {
                return None;
            }
            result |= bits << shift;
            if b < 0x80 {
                self.pos += i + 1;
                return Some(result);
            }
        }
        None
    }

    /// Reads `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// Reads a varint length and that many bytes.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint64()?).ok()?;
        self.bytes(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_boundaries() {
        for v in [0u64, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v));
            let mut d = Decoder::new(&buf);
            assert_eq!(d.varint64(), Some(v));
            assert!(d.is_empty());
        }
    }

    #[test]
    fn varint32_rejects_overflow_and_truncation() {
        let mut buf = Vec::new();
        put_varint64(&mut buf, u64::from(u32::MAX) + 1);
        assert_eq!(Decoder::new(&buf).varint32(), None);
        assert_eq!(Decoder::new(&[0x80, 0x80]).varint64(), None);
        // 11 continuation bytes never terminate within the 10-byte limit.
        assert_eq!(Decoder::new(&[0xff; 11]).varint64(), None);
        // A tenth byte carrying more than the 64th bit overflows.
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert_eq!(Decoder::new(&over).varint64(), None);
    }

    #[test]
    fn fixed_roundtrip_and_short_input() {
        let mut buf = Vec::new();
        put_fixed32(&mut buf, 0xdead_beef);
        put_fixed64(&mut buf, 0x0102_0304_0506_0708);
        let mut d = Decoder::new(&buf);
        assert_eq!(d.fixed32(), Some(0xdead_beef));
        assert_eq!(d.fixed64(), Some(0x0102_0304_0506_0708));
        assert_eq!(d.fixed32(), None);
        assert_eq!(decode_fixed64(&[1, 2, 3]), None);
    }

    proptest! {
        #[test]
        fn varint_roundtrip(values in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut buf = Vec::new();
            for &v in &values { put_varint64(&mut buf, v); }
            let mut d = Decoder::new(&buf);
            for &v in &values { prop_assert_eq!(d.varint64(), Some(v)); }
            prop_assert!(d.is_empty());
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut d = Decoder::new(&bytes);
            while !d.is_empty() {
                if d.varint64().is_none() && d.length_prefixed().is_none() && d.u8().is_none() {
                    break;
                }
            }
        }
    }
}
