//! Thrift values without generated code: a call's arguments are read into a [`Struct`]
//! of field id → [`Value`] whatever the IDL says, and replies are built the same way.
//! Reading is lenient as the gateway must be — a field the IDL calls required may be
//! missing, an unknown field is kept and ignored — and bounded: nesting deeper than
//! [`MAX_DEPTH`] is an error, never a stack overflow.

use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TOutputProtocol,
    TSetIdentifier, TStructIdentifier, TType,
};
use thrift::{ProtocolError, ProtocolErrorKind};

/// Deepest nesting of structs and containers a message may have.
pub const MAX_DEPTH: usize = 64;

/// Most values one message may hold (a batch of a million columns holds about five
/// million): a peer cannot make the gateway build more than this, whatever the counts
/// its containers declare.
pub const MAX_VALUES: usize = 16 << 20;

/// One Thrift value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Byte(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(f64),
    /// `binary` and `string` alike.
    Binary(Vec<u8>),
    Struct(Struct),
    List(TType, Vec<Value>),
    Set(TType, Vec<Value>),
    Map(TType, TType, Vec<(Value, Value)>),
}

impl Value {
    /// The wire type of this value.
    pub fn ttype(&self) -> TType {
        match self {
            Value::Bool(_) => TType::Bool,
            Value::Byte(_) => TType::I08,
            Value::I16(_) => TType::I16,
            Value::I32(_) => TType::I32,
            Value::I64(_) => TType::I64,
            Value::Double(_) => TType::Double,
            Value::Binary(_) => TType::String,
            Value::Struct(_) => TType::Struct,
            Value::List(..) => TType::List,
            Value::Set(..) => TType::Set,
            Value::Map(..) => TType::Map,
        }
    }

    pub fn binary(b: impl Into<Vec<u8>>) -> Value {
        Value::Binary(b.into())
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::Binary(s.into().into_bytes())
    }

    /// A list of binaries.
    pub fn binaries<I: IntoIterator<Item = Vec<u8>>>(items: I) -> Value {
        Value::List(
            TType::String,
            items.into_iter().map(Value::Binary).collect(),
        )
    }

    /// A list of structs.
    pub fn structs<I: IntoIterator<Item = Struct>>(items: I) -> Value {
        Value::List(
            TType::Struct,
            items.into_iter().map(Value::Struct).collect(),
        )
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Binary(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_struct(&self) -> Option<&Struct> {
        match self {
            Value::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// Integers of any width, widened.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Byte(v) => Some(i64::from(*v)),
            Value::I16(v) => Some(i64::from(*v)),
            Value::I32(v) => Some(i64::from(*v)),
            Value::I64(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The elements of a list or set.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(_, items) | Value::Set(_, items) => Some(items),
            _ => None,
        }
    }
}

/// A struct (or a call's argument list, or a reply's result): fields by id, in the
/// order they were read or added.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Struct {
    pub fields: Vec<(i16, Value)>,
}

impl Struct {
    pub fn new() -> Struct {
        Struct::default()
    }

    /// Adds field `id` (builder style).
    pub fn with(mut self, id: i16, v: Value) -> Struct {
        self.fields.push((id, v));
        self
    }

    /// Adds field `id` when `v` is present.
    pub fn with_opt(self, id: i16, v: Option<Value>) -> Struct {
        match v {
            Some(v) => self.with(id, v),
            None => self,
        }
    }

    /// Field `id`, the last one when a message repeats it.
    pub fn get(&self, id: i16) -> Option<&Value> {
        self.fields
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| v)
    }

    pub fn has(&self, id: i16) -> bool {
        self.get(id).is_some()
    }

    pub fn bytes(&self, id: i16) -> Option<&[u8]> {
        self.get(id).and_then(Value::as_bytes)
    }

    /// A binary field as text (lossy: invalid UTF-8 becomes U+FFFD).
    pub fn text(&self, id: i16) -> Option<String> {
        self.bytes(id)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    pub fn i64(&self, id: i16) -> Option<i64> {
        self.get(id).and_then(Value::as_i64)
    }

    pub fn i32(&self, id: i16) -> Option<i32> {
        self.i64(id).and_then(|v| i32::try_from(v).ok())
    }

    pub fn bool(&self, id: i16) -> Option<bool> {
        self.get(id).and_then(Value::as_bool)
    }

    pub fn strukt(&self, id: i16) -> Option<&Struct> {
        self.get(id).and_then(Value::as_struct)
    }

    pub fn list(&self, id: i16) -> Option<&[Value]> {
        self.get(id).and_then(Value::as_list)
    }

    /// A list of binaries (other elements skipped).
    pub fn byte_list(&self, id: i16) -> Option<Vec<&[u8]>> {
        self.list(id)
            .map(|l| l.iter().filter_map(Value::as_bytes).collect())
    }

    /// A list of structs (other elements skipped).
    pub fn struct_list(&self, id: i16) -> Option<Vec<&Struct>> {
        self.list(id)
            .map(|l| l.iter().filter_map(Value::as_struct).collect())
    }

    /// A map's entries.
    pub fn map(&self, id: i16) -> Option<&[(Value, Value)]> {
        match self.get(id) {
            Some(Value::Map(_, _, entries)) => Some(entries),
            _ => None,
        }
    }

    /// Reads a struct whose begin has not been read yet.
    pub fn read(p: &mut dyn TInputProtocol) -> thrift::Result<Struct> {
        Struct::read_at_most(p, MAX_VALUES)
    }

    /// Reads a struct of at most `values` values.
    fn read_at_most(p: &mut dyn TInputProtocol, values: usize) -> thrift::Result<Struct> {
        let mut budget = values;
        read_struct(p, 0, &mut budget)
    }

    pub fn write(&self, p: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        write_struct(p, self)
    }
}

/// What went wrong, in words: the `thrift` crate's errors print their kind alone and
/// keep the detail in their message.
pub fn describe(e: &thrift::Error) -> String {
    let (kind, message) = match e {
        thrift::Error::Protocol(p) => (p.to_string(), p.message.as_str()),
        thrift::Error::Transport(t) => (t.to_string(), t.message.as_str()),
        thrift::Error::Application(a) => (a.to_string(), a.message.as_str()),
        thrift::Error::User(u) => return u.to_string(),
    };
    if message.is_empty() {
        kind
    } else {
        format!("{kind}: {message}")
    }
}

fn too_deep() -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(
        ProtocolErrorKind::DepthLimit,
        format!("message nested deeper than {MAX_DEPTH} levels"),
    ))
}

fn too_many() -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(
        ProtocolErrorKind::SizeLimit,
        format!("message holds more than {MAX_VALUES} values"),
    ))
}

fn read_struct(
    p: &mut dyn TInputProtocol,
    depth: usize,
    budget: &mut usize,
) -> thrift::Result<Struct> {
    if depth >= MAX_DEPTH {
        return Err(too_deep());
    }
    p.read_struct_begin()?;
    let mut s = Struct::new();
    loop {
        let f = p.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        let id = f.id.unwrap_or(0);
        if let Some(v) = read_value(p, f.field_type, depth + 1, budget)? {
            s.fields.push((id, v));
        }
        p.read_field_end()?;
    }
    p.read_struct_end()?;
    Ok(s)
}

/// Reads one value of wire type `t`; `None` for types without a value (void, uuid).
fn read_value(
    p: &mut dyn TInputProtocol,
    t: TType,
    depth: usize,
    budget: &mut usize,
) -> thrift::Result<Option<Value>> {
    if depth >= MAX_DEPTH {
        return Err(too_deep());
    }
    *budget = budget.checked_sub(1).ok_or_else(too_many)?;
    Ok(Some(match t {
        TType::Bool => Value::Bool(p.read_bool()?),
        TType::I08 => Value::Byte(p.read_i8()?),
        TType::I16 => Value::I16(p.read_i16()?),
        TType::I32 => Value::I32(p.read_i32()?),
        TType::I64 => Value::I64(p.read_i64()?),
        TType::Double => Value::Double(p.read_double()?),
        TType::String | TType::Utf7 => Value::Binary(p.read_bytes()?),
        TType::Struct => Value::Struct(read_struct(p, depth, budget)?),
        TType::List => {
            let id = p.read_list_begin()?;
            let items = read_items(p, id.element_type, id.size, depth, budget)?;
            p.read_list_end()?;
            Value::List(id.element_type, items)
        }
        TType::Set => {
            let id = p.read_set_begin()?;
            let items = read_items(p, id.element_type, id.size, depth, budget)?;
            p.read_set_end()?;
            Value::Set(id.element_type, items)
        }
        TType::Map => {
            let id = p.read_map_begin()?;
            let (kt, vt) = (
                id.key_type.unwrap_or(TType::Void),
                id.value_type.unwrap_or(TType::Void),
            );
            let mut entries = Vec::with_capacity(prealloc(id.size));
            for _ in 0..id.size.max(0) {
                let k = read_value(p, kt, depth + 1, budget)?;
                let v = read_value(p, vt, depth + 1, budget)?;
                if let (Some(k), Some(v)) = (k, v) {
                    entries.push((k, v));
                }
            }
            p.read_map_end()?;
            Value::Map(kt, vt, entries)
        }
        other => {
            p.skip(other)?;
            return Ok(None);
        }
    }))
}

/// Capacity to reserve for a container of `n` elements: never trust a peer's count
/// with memory before the elements arrive.
fn prealloc(n: i32) -> usize {
    usize::try_from(n).unwrap_or(0).min(1024)
}

fn read_items(
    p: &mut dyn TInputProtocol,
    t: TType,
    n: i32,
    depth: usize,
    budget: &mut usize,
) -> thrift::Result<Vec<Value>> {
    let mut items = Vec::with_capacity(prealloc(n));
    for _ in 0..n.max(0) {
        if let Some(v) = read_value(p, t, depth + 1, budget)? {
            items.push(v);
        }
    }
    Ok(items)
}

fn write_struct(p: &mut dyn TOutputProtocol, s: &Struct) -> thrift::Result<()> {
    p.write_struct_begin(&TStructIdentifier::new(""))?;
    for (id, v) in &s.fields {
        p.write_field_begin(&TFieldIdentifier::new::<Option<String>, String, i16>(
            None,
            v.ttype(),
            *id,
        ))?;
        write_value(p, v)?;
        p.write_field_end()?;
    }
    p.write_field_stop()?;
    p.write_struct_end()
}

fn len(n: usize) -> thrift::Result<i32> {
    i32::try_from(n).map_err(|_| {
        thrift::Error::Protocol(ProtocolError::new(
            ProtocolErrorKind::SizeLimit,
            format!("{n} elements do not fit a Thrift container"),
        ))
    })
}

fn write_value(p: &mut dyn TOutputProtocol, v: &Value) -> thrift::Result<()> {
    match v {
        Value::Bool(b) => p.write_bool(*b),
        Value::Byte(b) => p.write_i8(*b),
        Value::I16(i) => p.write_i16(*i),
        Value::I32(i) => p.write_i32(*i),
        Value::I64(i) => p.write_i64(*i),
        Value::Double(d) => p.write_double(*d),
        Value::Binary(b) => p.write_bytes(b),
        Value::Struct(s) => write_struct(p, s),
        Value::List(t, items) => {
            p.write_list_begin(&TListIdentifier::new(*t, len(items.len())?))?;
            for i in items {
                write_value(p, i)?;
            }
            p.write_list_end()
        }
        Value::Set(t, items) => {
            p.write_set_begin(&TSetIdentifier::new(*t, len(items.len())?))?;
            for i in items {
                write_value(p, i)?;
            }
            p.write_set_end()
        }
        Value::Map(kt, vt, entries) => {
            p.write_map_begin(&TMapIdentifier::new(*kt, *vt, len(entries.len())?))?;
            for (k, v) in entries {
                write_value(p, k)?;
                write_value(p, v)?;
            }
            p.write_map_end()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{
        TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    };

    fn sample() -> Struct {
        Struct::new()
            .with(1, Value::binary(b"row".to_vec()))
            .with(2, Value::I64(-5))
            .with(3, Value::Bool(true))
            .with(
                4,
                Value::structs([Struct::new().with(1, Value::I32(7)), Struct::new()]),
            )
            .with(
                5,
                Value::Map(
                    TType::String,
                    TType::Struct,
                    vec![(Value::binary(b"k".to_vec()), Value::Struct(Struct::new()))],
                ),
            )
            .with(6, Value::List(TType::String, vec![]))
            .with(7, Value::Double(1.5))
    }

    #[test]
    fn round_trips_binary_and_compact() {
        let s = sample();
        let mut buf = Vec::new();
        s.write(&mut TBinaryOutputProtocol::new(&mut buf, true))
            .unwrap();
        let back = Struct::read(&mut TBinaryInputProtocol::new(&buf[..], true)).unwrap();
        assert_eq!(back, s);
        let mut buf = Vec::new();
        s.write(&mut TCompactOutputProtocol::new(&mut buf)).unwrap();
        let back = Struct::read(&mut TCompactInputProtocol::new(&buf[..])).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.i32(4), None);
        assert_eq!(back.struct_list(4).unwrap()[0].i32(1), Some(7));
        assert_eq!(back.text(1).as_deref(), Some("row"));
    }

    #[test]
    fn hostile_nesting_is_an_error() {
        // A struct whose field 1 is a struct whose field 1 is a struct ... (binary).
        let mut buf = Vec::new();
        for _ in 0..10_000 {
            buf.extend_from_slice(&[12, 0, 1]);
        }
        let err = Struct::read(&mut TBinaryInputProtocol::new(&buf[..], true)).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("nested deeper") || msg.contains("depth"),
            "{msg}"
        );
    }

    #[test]
    fn a_message_cannot_hold_more_values_than_the_budget() {
        // A struct of 1,001 boolean fields, read with room for 1,000 values.
        let mut buf = Vec::new();
        for i in 0..1001u16 {
            buf.extend_from_slice(&[2, (i >> 8) as u8, i as u8, 1]);
        }
        buf.push(0);
        let s = Struct::read_at_most(&mut TBinaryInputProtocol::new(&buf[..], true), 1001);
        assert_eq!(s.unwrap().fields.len(), 1001);
        let err =
            Struct::read_at_most(&mut TBinaryInputProtocol::new(&buf[..], true), 1000).unwrap_err();
        let msg = describe(&err);
        assert!(msg.contains("more than") && msg.contains("values"), "{msg}");
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut buf = Vec::new();
        sample()
            .write(&mut TBinaryOutputProtocol::new(&mut buf, true))
            .unwrap();
        for cut in 0..buf.len() {
            assert!(Struct::read(&mut TBinaryInputProtocol::new(&buf[..cut], true)).is_err());
        }
    }
}
