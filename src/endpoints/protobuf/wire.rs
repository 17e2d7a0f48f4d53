//! The protobuf wire format: a bounds-checked field reader with gogo's error texts, and the
//! writing helpers. Nothing here knows about messages.

/// Wire type numbers (the type model records them per field).
pub(super) use crate::typed::model::{FIXED32, FIXED64, LEN, VARINT};

/// One field occurrence as it was on the wire (groups are skipped while reading).
#[derive(Clone, Copy, Debug)]
pub(super) enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a message or a packed repeated field.
    Len(&'a [u8]),
    /// Wire type 3, already skipped with its contents.
    Group,
    /// Wire type 5.
    Fixed32(u32),
}

impl Wire<'_> {
    /// The wire type number.
    pub(super) fn wire_type(&self) -> u8 {
        match self {
            Wire::Varint(_) => VARINT,
            Wire::Fixed64(_) => FIXED64,
            Wire::Len(_) => LEN,
            Wire::Group => 3,
            Wire::Fixed32(_) => FIXED32,
        }
    }
}

/// A cursor over protobuf bytes. Every read is bounds-checked and reports truncation as an
/// error (the texts are gogo's, without the message name the caller adds).
pub(super) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub(super) fn varint(&mut self) -> Result<u64, String> {
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            if shift >= 64 {
                return Err("integer overflow".into());
            }
            let Some(&b) = self.buf.get(self.pos) else {
                return Err("unexpected EOF".into());
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| "invalid length".to_string())?;
        let Some(bytes) = self.buf.get(self.pos..end) else {
            return Err("unexpected EOF".into());
        };
        self.pos = end;
        Ok(bytes)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn len_delimited(&mut self) -> Result<&'a [u8], String> {
        let len = self.varint()?;
        // Go reads the length into an int and rejects negative values.
        if len > i64::MAX as u64 {
            return Err("negative length found during unmarshaling".into());
        }
        let len = usize::try_from(len).map_err(|_| "unexpected EOF".to_string())?;
        self.take(len)
    }

    /// Skips a group whose start tag was just read, nested groups included (iteratively, so a
    /// deep nest of groups cannot exhaust the stack).
    fn skip_group(&mut self) -> Result<(), String> {
        let mut depth = 1usize;
        while depth > 0 {
            if self.at_end() {
                return Err("unexpected EOF".into());
            }
            let key = self.varint()?;
            match key & 7 {
                0 => {
                    self.varint()?;
                }
                1 => {
                    self.take(8)?;
                }
                2 => {
                    self.len_delimited()?;
                }
                3 => depth += 1,
                4 => depth -= 1,
                5 => {
                    self.take(4)?;
                }
                other => return Err(format!("illegal wireType {other}")),
            }
        }
        Ok(())
    }

    /// The next field: its number and value. Call only when not [`Reader::at_end`].
    pub(super) fn field(&mut self) -> Result<(u32, Wire<'a>), String> {
        let key = self.varint()?;
        let wire_type = key & 7;
        let num = match u32::try_from(key >> 3) {
            // gogo reads the number into an int32.
            Ok(n) if n > 0 && n <= i32::MAX as u32 => n,
            _ => {
                return Err(format!(
                    "illegal tag {} (wire type {wire_type})",
                    (key >> 3) as i32
                ))
            }
        };
        let wire = match wire_type {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(self.fixed::<8>()?)),
            2 => Wire::Len(self.len_delimited()?),
            3 => {
                self.skip_group()?;
                Wire::Group
            }
            4 => return Err("wiretype end group for non-group".into()),
            5 => Wire::Fixed32(u32::from_le_bytes(self.fixed::<4>()?)),
            other => return Err(format!("illegal wireType {other}")),
        };
        Ok((num, wire))
    }
}

/// Every varint of a packed repeated field.
pub(super) fn packed_varints(mut bytes: &[u8]) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let mut r = Reader::new(bytes);
        out.push(r.varint()?);
        bytes = &bytes[r.pos..];
    }
    Ok(out)
}

/// Bytes as Go's JSON encoder writes a string: each byte that does not start a valid UTF-8
/// sequence becomes one U+FFFD.
pub(super) fn go_string(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                bytes = rest.get(1..).unwrap_or_default();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

pub(super) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

pub(super) fn put_key(buf: &mut Vec<u8>, number: u32, wire_type: u8) {
    put_varint(buf, (u64::from(number) << 3) | u64::from(wire_type));
}

/// A length-delimited field from bytes at hand.
pub(super) fn put_bytes(buf: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_key(buf, number, LEN);
    put_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// A length-delimited field whose contents `write` appends to the buffer. The length is not
/// known in advance: one byte is reserved for it and the contents are moved when it needs more,
/// so no scratch buffer is allocated per nested message.
pub(super) fn put_nested<E>(
    buf: &mut Vec<u8>,
    number: u32,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) -> Result<(), E> {
    put_key(buf, number, LEN);
    let at = buf.len();
    buf.push(0);
    write(buf)?;
    let len = buf.len() - at - 1;
    let (prefix, n) = varint_bytes(len as u64);
    if n > 1 {
        buf.resize(buf.len() + n - 1, 0);
        buf.copy_within(at + 1..at + 1 + len, at + n);
    }
    buf[at..at + n].copy_from_slice(&prefix[..n]);
    Ok(())
}

/// A varint in a stack buffer: the bytes and how many are used.
fn varint_bytes(mut v: u64) -> ([u8; 10], usize) {
    let mut out = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        out[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    out[n] = v as u8;
    (out, n + 1)
}
