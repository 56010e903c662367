//! The messages of google/pprof's `profile.proto`, field by field, with prost's derives.

use prost::Message;

/// `perftools.profiles.Profile`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Profile {
    /// What each value of a sample counts.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// The binaries.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// The addresses.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// The functions.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string, referred to by index; `string_table[0]` is `""`.
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Frames to drop (a regular expression); unused.
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Frames to keep; unused.
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When the profile was taken; unknown (0).
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long it took; unknown (0).
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// The sampling event; unset.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The sampling period; unset.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments, as string indices.
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The name of the sample type shown first, as a string index.
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// `ValueType`: a kind of value and its unit, as string indices.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ValueType {
    /// The kind.
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// The unit.
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `Sample`: locations, leaf first, and a value per sample type.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Sample {
    /// Location IDs, the leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// A value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Its labels: `source`, what it is a sample of.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// `Label`: a key and a string value, as string indices.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Label {
    /// The key.
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// The value.
    #[prost(int64, tag = "2")]
    pub str: i64,
}

/// `Mapping`: one binary's address range.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Mapping {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Where it starts: 0, so that addresses are RVAs.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// Where it ends: past the largest RVA.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// The offset in the file; 0.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// The binary's name, as a string index.
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Its symbol-server key, as a string index.
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Whether its locations have functions: always.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Whether they have file names.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Whether they have line numbers.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Whether they have inlined frames.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// `Location`: one address of one binary.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Location {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its binary's mapping.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The RVA.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// The function it is in.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Whether several functions were folded here; never.
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// `Line`: a function of a location.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Line {
    /// The function.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// The source line; unknown (0).
    #[prost(int64, tag = "2")]
    pub line: i64,
}

/// `Function`.
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Function {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its name, as a string index.
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Its name as the linker knows it, as a string index.
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Its source file (here: the binary), as a string index.
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// Its first source line; unknown (0).
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}
