//! The part of Ruby the HBase shell's commands are written in: a command name followed by
//! comma-separated literals — strings ('…' and "…" with `\xNN` escapes), integers,
//! floats, `true`/`false`/`nil`, bare constants (`NAME`, `VERSIONS`), arrays and hashes
//! (`{NAME => 'f'}`, also without braces at the end of the line).

use std::fmt;

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Vec<u8>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// A bare word such as `NAME`: a constant whose value is its name.
    Const(String),
    Array(Vec<Value>),
    Hash(Vec<(Value, Value)>),
}

impl Value {
    /// The value as bytes when it is a string or constant.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        match self {
            Value::Str(b) => Some(b.clone()),
            Value::Const(s) => Some(s.as_bytes().to_vec()),
            _ => None,
        }
    }

    /// The value as text (strings, constants, numbers, booleans).
    pub fn text(&self) -> Option<String> {
        match self {
            Value::Str(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::Const(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Str(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            _ => None,
        }
    }

    pub fn truthy(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Str(_) | Value::Const(_) => match self.text()?.to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// Looks up a hash entry by key name.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Hash(entries) => entries
                .iter()
                .find(|(k, _)| k.text().is_some_and(|t| t.eq_ignore_ascii_case(key)))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(b) => write!(f, "'{}'", cellar_types::to_string_binary(b)),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Nil => write!(f, "nil"),
            Value::Const(s) => write!(f, "{s}"),
            Value::Array(a) => {
                write!(f, "[")?;
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Hash(h) => {
                write!(f, "{{")?;
                for (i, (k, v)) in h.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k} => {v}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandLine {
    pub name: String,
    pub args: Vec<Value>,
}

/// A syntax error and where it is (0-based character position).
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub pos: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "syntax error at position {}: {}",
            self.pos + 1,
            self.message
        )
    }
}

/// How deeply arrays and hashes may nest in one line: more than any command takes, far
/// less than would exhaust the stack.
pub const MAX_NESTING: usize = 64;

struct Parser<'a> {
    s: &'a [char],
    pos: usize,
    depth: usize,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    fn err<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            pos: self.pos,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += 1;
            } else if c == '#' {
                self.pos = self.s.len();
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_arrow(&mut self) -> bool {
        self.skip_ws();
        if self.peek() == Some('=') && self.s.get(self.pos + 1) == Some(&'>') {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '?' || c == '!')
        {
            self.pos += 1;
        }
        self.s[start..self.pos].iter().collect()
    }

    fn string(&mut self, quote: char) -> PResult<Value> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                self.pos = start;
                return self.err(format!("unterminated string starting with {quote}"));
            };
            self.pos += 1;
            if c == quote {
                return Ok(Value::Str(out));
            }
            if c != '\\' {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            let Some(e) = self.peek() else {
                return self.err("string ends after a backslash");
            };
            self.pos += 1;
            if quote == '\'' {
                // Single quotes: only \\ and \' are escapes.
                if e != '\\' && e != '\'' {
                    out.push(b'\\');
                }
                let mut buf = [0u8; 4];
                out.extend_from_slice(e.encode_utf8(&mut buf).as_bytes());
                continue;
            }
            match e {
                'n' => out.push(b'\n'),
                't' => out.push(b'\t'),
                'r' => out.push(b'\r'),
                '0' => out.push(0),
                'e' => out.push(0x1b),
                's' => out.push(b' '),
                'x' => {
                    let mut n = 0u32;
                    let mut digits = 0;
                    while digits < 2 {
                        match self.peek().and_then(|c| c.to_digit(16)) {
                            Some(d) => {
                                n = n * 16 + d;
                                digits += 1;
                                self.pos += 1;
                            }
                            None => break,
                        }
                    }
                    if digits == 0 {
                        return self.err("\\x needs hex digits");
                    }
                    out.push(n as u8);
                }
                other => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
    }

    fn number(&mut self) -> PResult<Value> {
        let start = self.pos;
        if self.peek() == Some('-') || self.peek() == Some('+') {
            self.pos += 1;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == '_' || c == '.' || c == 'e' || c == 'E')
        {
            self.pos += 1;
        }
        let text: String = self.s[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(f) = text.parse::<f64>() {
            return Ok(Value::Float(f));
        }
        self.pos = start;
        self.err(format!("bad number '{text}'"))
    }

    fn value(&mut self) -> PResult<Value> {
        self.skip_ws();
        if matches!(self.peek(), Some('[' | '{')) {
            if self.depth >= MAX_NESTING {
                return self.err(format!(
                    "arrays and hashes nest more than {MAX_NESTING} levels deep"
                ));
            }
            self.depth += 1;
            let v = self.nested();
            self.depth -= 1;
            return v;
        }
        self.scalar()
    }

    fn nested(&mut self) -> PResult<Value> {
        match self.peek() {
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.eat(']') {
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(',') {
                        if self.eat(']') {
                            return Ok(Value::Array(items));
                        }
                        continue;
                    }
                    if self.eat(']') {
                        return Ok(Value::Array(items));
                    }
                    return self.err("expected ',' or ']'");
                }
            }
            Some('{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                if self.eat('}') {
                    return Ok(Value::Hash(entries));
                }
                loop {
                    let k = self.value()?;
                    if !self.eat_arrow() {
                        return self.err("expected '=>'");
                    }
                    let v = self.value()?;
                    entries.push((k, v));
                    if self.eat(',') {
                        if self.eat('}') {
                            return Ok(Value::Hash(entries));
                        }
                        continue;
                    }
                    if self.eat('}') {
                        return Ok(Value::Hash(entries));
                    }
                    return self.err("expected ',' or '}'");
                }
            }
            _ => self.scalar(),
        }
    }

    fn scalar(&mut self) -> PResult<Value> {
        match self.peek() {
            None => self.err("expected a value"),
            Some(q @ ('\'' | '"')) => self.string(q),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.number(),
            Some(':') => {
                // A Ruby symbol: :name
                self.pos += 1;
                let w = self.word();
                if w.is_empty() {
                    return self.err("expected a symbol name after ':'");
                }
                Ok(Value::Const(w))
            }
            Some(c) if c.is_alphabetic() || c == '_' => {
                let w = self.word();
                Ok(match w.as_str() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "nil" => Value::Nil,
                    _ => Value::Const(w),
                })
            }
            Some(c) => self.err(format!("unexpected '{c}'")),
        }
    }
}

/// Parses one command line; `Ok(None)` for a blank or comment line.
pub fn parse_line(line: &str) -> Result<Option<CommandLine>, ParseError> {
    let chars: Vec<char> = line.chars().collect();
    let mut p = Parser {
        s: &chars,
        pos: 0,
        depth: 0,
    };
    p.skip_ws();
    if p.peek().is_none() {
        return Ok(None);
    }
    if !p.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
        return p.err("expected a command name");
    }
    let name = p.word();
    let paren = p.eat('(');
    let mut args = Vec::new();
    let mut trailing: Vec<(Value, Value)> = Vec::new();
    p.skip_ws();
    let at_end = |p: &mut Parser| {
        p.skip_ws();
        p.peek().is_none() || (paren && p.peek() == Some(')'))
    };
    if !at_end(&mut p) {
        loop {
            let v = p.value()?;
            if p.eat_arrow() {
                // `key => value` pairs without braces form one trailing hash.
                let val = p.value()?;
                trailing.push((v, val));
            } else if !trailing.is_empty() {
                return p.err("a positional argument cannot follow 'key => value' pairs");
            } else {
                args.push(v);
            }
            if p.eat(',') {
                continue;
            }
            break;
        }
    }
    if !trailing.is_empty() {
        args.push(Value::Hash(trailing));
    }
    if paren && !p.eat(')') {
        return p.err("expected ')'");
    }
    p.skip_ws();
    if p.peek().is_some() {
        return p.err("expected ',' or the end of the line");
    }
    Ok(Some(CommandLine { name, args }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.as_bytes().to_vec())
    }

    #[test]
    fn hbase_shell_lines_parse() {
        let c = parse_line(
            "create 't', {NAME => 'd', VERSIONS => 3, DATA_BLOCK_ENCODING => 'FAST_DIFF'}",
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.name, "create");
        assert_eq!(c.args[0], s("t"));
        assert_eq!(c.args[1].get("VERSIONS"), Some(&Value::Int(3)));
        let c = parse_line("alter 't', NAME => 'f', VERSIONS => 5")
            .unwrap()
            .unwrap();
        assert_eq!(c.args.len(), 2);
        assert_eq!(c.args[1].get("name"), Some(&s("f")));
        let c = parse_line(r#"put 't', "r\x00\x01", 'f:q', 'it''s'"#);
        assert!(c.is_err(), "adjacent strings are not Ruby we accept");
        let c = parse_line(r#"put 't', "r\x00\xff", 'f:q', 'a\'b', 17"#)
            .unwrap()
            .unwrap();
        assert_eq!(c.args[1], Value::Str(vec![b'r', 0, 0xff]));
        assert_eq!(c.args[3], s("a'b"));
        assert_eq!(c.args[4], Value::Int(17));
        let c = parse_line("get 't', 'r', {COLUMN => ['f:a', 'f:b'], TIMERANGE => [1, 5]}")
            .unwrap()
            .unwrap();
        assert_eq!(
            c.args[2].get("TIMERANGE"),
            Some(&Value::Array(vec![Value::Int(1), Value::Int(5)]))
        );
        assert_eq!(parse_line("  # a comment").unwrap(), None);
        assert_eq!(parse_line("list").unwrap().unwrap().args, vec![]);
        assert_eq!(
            parse_line("exists('t')").unwrap().unwrap().args,
            vec![s("t")]
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse_line("put 't', 'r").unwrap_err();
        assert_eq!(e.pos, 9);
        let e = parse_line("create 't', {NAME 'f'}").unwrap_err();
        assert!(e.message.contains("=>"), "{e}");
        assert!(parse_line("scan 't' 'x'").is_err());
        assert!(parse_line("123").is_err());
        assert!(parse_line("get 't', [1, 2").is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("x {}1{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse_line(&ok).is_ok());
        for deep in [
            format!("x {}", "[".repeat(200_000)),
            format!("x {}", "{'a' => ".repeat(100_000)),
            format!(
                "x {}1{}",
                "[".repeat(MAX_NESTING + 1),
                "]".repeat(MAX_NESTING + 1)
            ),
        ] {
            let e = parse_line(&deep).unwrap_err();
            assert!(e.message.contains("nest"), "{e}");
        }
    }
}
