//! The tests' own reading of a pprof profile (`profile.proto`, protocol buffers), sharing no
//! code with the writer: the wire format read field by field, as the viewers read it, so
//! that a bug of the writer's message types cannot hide in the reader's.
//!
//! ```text
//! field   key = number << 3 | wire type    0 varint, 1 64-bit, 2 bytes (length, then them),
//!                                          5 32-bit
//! packed  a repeated number field may come as one bytes field of varints
//! ```
//!
//! Only what the tests read is kept; every other field is skipped by its wire type.

/// A profile: `Profile` of profile.proto.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    /// 1: what each sample's values are.
    pub sample_type: Vec<ValueType>,
    /// 2: the samples.
    pub sample: Vec<Sample>,
    /// 3: the binaries.
    pub mapping: Vec<Mapping>,
    /// 4: the addresses.
    pub location: Vec<Location>,
    /// 5: the functions.
    pub function: Vec<Function>,
    /// 6: the strings the others index; string 0 is empty.
    pub string_table: Vec<String>,
    /// 13: comments, as string indices.
    pub comment: Vec<i64>,
    /// 14: the sample type a viewer opens on, as a string index.
    pub default_sample_type: i64,
}

/// `ValueType`: a sample type and its unit, as string indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueType {
    /// 1.
    pub r#type: i64,
    /// 2.
    pub unit: i64,
}

/// `Sample`: its stack (leaf first) and its values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// 1.
    pub location_id: Vec<u64>,
    /// 2.
    pub value: Vec<i64>,
    /// 3.
    pub label: Vec<Label>,
}

/// `Label`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Label {
    /// 1.
    pub key: i64,
    /// 2.
    pub str: i64,
    /// 3.
    pub num: i64,
}

/// `Mapping`: a binary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    /// 1.
    pub id: u64,
    /// 2.
    pub memory_start: u64,
    /// 3.
    pub memory_limit: u64,
    /// 4.
    pub file_offset: u64,
    /// 5.
    pub filename: i64,
    /// 6.
    pub build_id: i64,
    /// 7.
    pub has_functions: bool,
    /// 8.
    pub has_filenames: bool,
    /// 9.
    pub has_line_numbers: bool,
    /// 10.
    pub has_inline_frames: bool,
}

/// `Location`: an address and the functions there, innermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// 1.
    pub id: u64,
    /// 2.
    pub mapping_id: u64,
    /// 3.
    pub address: u64,
    /// 4.
    pub line: Vec<Line>,
}

/// `Line`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// 1.
    pub function_id: u64,
    /// 2.
    pub line: i64,
}

/// `Function`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Function {
    /// 1.
    pub id: u64,
    /// 2.
    pub name: i64,
    /// 3.
    pub system_name: i64,
    /// 4.
    pub filename: i64,
    /// 5.
    pub start_line: i64,
}

/// One field as read: its number and its value.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// A message's bytes, read field by field.
struct Fields<'a> {
    bytes: &'a [u8],
}

impl<'a> Fields<'a> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.bytes.split_first().ok_or("a varint cut short")?;
            self.bytes = rest;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a varint of more than 10 bytes".into())
    }

    fn next(&mut self) -> Option<Result<(u64, Value<'a>), String>> {
        if self.bytes.is_empty() {
            return None;
        }
        Some(self.field())
    }

    fn field(&mut self) -> Result<(u64, Value<'a>), String> {
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 | 5 => {
                let n = if key & 7 == 1 { 8 } else { 4 };
                if self.bytes.len() < n {
                    return Err("a fixed-size field cut short".into());
                }
                self.bytes = &self.bytes[n..];
                Value::Fixed
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| "a huge length")?;
                if self.bytes.len() < n {
                    return Err(format!("a field of {n} bytes, {} left", self.bytes.len()));
                }
                let (value, rest) = self.bytes.split_at(n);
                self.bytes = rest;
                Value::Bytes(value)
            }
            t => return Err(format!("wire type {t}")),
        };
        Ok((key >> 3, value))
    }
}

/// Each field of `bytes`, by `take(number, value)`.
fn each<'a>(
    bytes: &'a [u8],
    mut take: impl FnMut(u64, Value<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut fields = Fields { bytes };
    while let Some(field) = fields.next() {
        let (number, value) = field?;
        take(number, value)?;
    }
    Ok(())
}

/// A varint field's value.
fn number(value: Value<'_>) -> Result<u64, String> {
    match value {
        Value::Varint(n) => Ok(n),
        _ => Err("a number of another wire type".into()),
    }
}

/// The numbers of a repeated number field: one varint, or packed ones.
fn numbers(value: Value<'_>, into: &mut Vec<u64>) -> Result<(), String> {
    match value {
        Value::Varint(n) => into.push(n),
        Value::Bytes(bytes) => {
            let mut packed = Fields { bytes };
            while !packed.bytes.is_empty() {
                into.push(packed.varint()?);
            }
        }
        Value::Fixed => return Err("a packed field of fixed numbers".into()),
    }
    Ok(())
}

/// A message field's bytes.
fn message<'a>(value: Value<'a>) -> Result<&'a [u8], String> {
    match value {
        Value::Bytes(b) => Ok(b),
        _ => Err("a message of another wire type".into()),
    }
}

impl Profile {
    /// Reads a profile from its bytes (not gzipped).
    pub fn decode(bytes: &[u8]) -> Result<Profile, String> {
        let mut p = Profile::default();
        each(bytes, |n, v| {
            match n {
                1 => p.sample_type.push(ValueType::decode(message(v)?)?),
                2 => p.sample.push(Sample::decode(message(v)?)?),
                3 => p.mapping.push(Mapping::decode(message(v)?)?),
                4 => p.location.push(Location::decode(message(v)?)?),
                5 => p.function.push(Function::decode(message(v)?)?),
                6 => {
                    let text = std::str::from_utf8(message(v)?).map_err(|e| e.to_string())?;
                    p.string_table.push(text.to_owned());
                }
                13 => {
                    let mut comments = Vec::new();
                    numbers(v, &mut comments)?;
                    p.comment.extend(comments.into_iter().map(|c| c as i64));
                }
                14 => p.default_sample_type = number(v)? as i64,
                _ => {}
            }
            Ok(())
        })?;
        Ok(p)
    }
}

impl ValueType {
    fn decode(bytes: &[u8]) -> Result<ValueType, String> {
        let mut t = ValueType::default();
        each(bytes, |n, v| {
            match n {
                1 => t.r#type = number(v)? as i64,
                2 => t.unit = number(v)? as i64,
                _ => {}
            }
            Ok(())
        })?;
        Ok(t)
    }
}

impl Sample {
    fn decode(bytes: &[u8]) -> Result<Sample, String> {
        let mut s = Sample::default();
        each(bytes, |n, v| {
            match n {
                1 => numbers(v, &mut s.location_id)?,
                2 => {
                    let mut values = Vec::new();
                    numbers(v, &mut values)?;
                    s.value.extend(values.into_iter().map(|x| x as i64));
                }
                3 => s.label.push(Label::decode(message(v)?)?),
                _ => {}
            }
            Ok(())
        })?;
        Ok(s)
    }
}

impl Label {
    fn decode(bytes: &[u8]) -> Result<Label, String> {
        let mut l = Label::default();
        each(bytes, |n, v| {
            match n {
                1 => l.key = number(v)? as i64,
                2 => l.str = number(v)? as i64,
                3 => l.num = number(v)? as i64,
                _ => {}
            }
            Ok(())
        })?;
        Ok(l)
    }
}

impl Mapping {
    fn decode(bytes: &[u8]) -> Result<Mapping, String> {
        let mut m = Mapping::default();
        each(bytes, |n, v| {
            match n {
                1 => m.id = number(v)?,
                2 => m.memory_start = number(v)?,
                3 => m.memory_limit = number(v)?,
                4 => m.file_offset = number(v)?,
                5 => m.filename = number(v)? as i64,
                6 => m.build_id = number(v)? as i64,
                7 => m.has_functions = number(v)? != 0,
                8 => m.has_filenames = number(v)? != 0,
                9 => m.has_line_numbers = number(v)? != 0,
                10 => m.has_inline_frames = number(v)? != 0,
                _ => {}
            }
            Ok(())
        })?;
        Ok(m)
    }
}

impl Location {
    fn decode(bytes: &[u8]) -> Result<Location, String> {
        let mut l = Location::default();
        each(bytes, |n, v| {
            match n {
                1 => l.id = number(v)?,
                2 => l.mapping_id = number(v)?,
                3 => l.address = number(v)?,
                4 => l.line.push(Line::decode(message(v)?)?),
                _ => {}
            }
            Ok(())
        })?;
        Ok(l)
    }
}

impl Line {
    fn decode(bytes: &[u8]) -> Result<Line, String> {
        let mut l = Line::default();
        each(bytes, |n, v| {
            match n {
                1 => l.function_id = number(v)?,
                2 => l.line = number(v)? as i64,
                _ => {}
            }
            Ok(())
        })?;
        Ok(l)
    }
}

impl Function {
    fn decode(bytes: &[u8]) -> Result<Function, String> {
        let mut f = Function::default();
        each(bytes, |n, v| {
            match n {
                1 => f.id = number(v)?,
                2 => f.name = number(v)? as i64,
                3 => f.system_name = number(v)? as i64,
                4 => f.filename = number(v)? as i64,
                5 => f.start_line = number(v)? as i64,
                _ => {}
            }
            Ok(())
        })?;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_is_read_field_by_field_packed_or_not() {
        // sample_type {type: 1, unit: 2}; sample {location_id: [7, 300] packed, value: 5};
        // string_table "", "a"; an unknown field 99 (varint) skipped.
        let bytes = [
            0x0A, 0x04, 0x08, 0x01, 0x10, 0x02, // 1: ValueType
            0x12, 0x07, 0x0A, 0x03, 0x07, 0xAC, 0x02, 0x10, 0x05, // 2: Sample
            0x32, 0x00, // 6: ""
            0x32, 0x01, b'a', // 6: "a"
            0x98, 0x06, 0x01, // 99: 1
        ];
        let p = Profile::decode(&bytes).unwrap();
        assert_eq!(p.sample_type, [ValueType { r#type: 1, unit: 2 }]);
        assert_eq!(p.sample[0].location_id, [7, 300]);
        assert_eq!(p.sample[0].value, [5]);
        assert_eq!(p.string_table, ["", "a"]);
        assert!(Profile::decode(&[0x0A, 0x05, 0x08]).is_err(), "cut short");
        assert!(Profile::decode(&[0x0B]).is_err(), "wire type 3");
    }
}
