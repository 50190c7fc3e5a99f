//! The filter language (HBase's `ParseFilter`): `Name(args)` combined with AND, OR,
//! unary SKIP and WHILE, and parentheses; precedence parentheses > SKIP = WHILE > AND > OR.
//! Arguments: quoted strings (`''` is a quote), integers, booleans, compare operators
//! (`<`, `<=`, `=`, `!=`, `>`, `>=`) and comparators (`'binary:…'`, `'binaryprefix:…'`,
//! `'regexstring:…'`, `'substring:…'`). Errors name the position of the problem. The input
//! is bytes; nesting is bounded ([`MAX_NESTING`]).

use std::fmt;

use cellar_api::{Comparator, CompareOp, FilterSpec, ListOp};

use crate::compare::Comparable;

/// A malformed filter string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 0-based byte position.
    pub pos: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at position {}", self.message, self.pos)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// A filter string that does not parse is a bad request.
    pub fn kind(&self) -> cellar_api::ErrorKind {
        cellar_api::ErrorKind::InvalidRequest
    }
}

impl From<ParseError> for cellar_api::Error {
    fn from(e: ParseError) -> cellar_api::Error {
        cellar_api::Error::new(e.kind(), e.to_string())
    }
}

type PResult<T> = Result<T, ParseError>;

#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Str(Vec<u8>),
    Int(i64),
    Bool(bool),
    Op(CompareOp),
}

/// How deeply parentheses, SKIP and WHILE may nest: far beyond any real filter, and
/// far below what would exhaust the stack.
pub const MAX_NESTING: usize = 100;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

fn err<T>(pos: usize, message: impl Into<String>) -> PResult<T> {
    Err(ParseError {
        pos,
        message: message.into(),
    })
}

impl<'a> Parser<'a> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && (self.s[self.pos] == b' ' || self.s[self.pos] == b'\t') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// Whether the keyword `kw` stands here, followed by a space or '('.
    fn at_keyword(&self, kw: &str) -> bool {
        let end = self.pos + kw.len();
        end <= self.s.len()
            && self.s[self.pos..end].eq_ignore_ascii_case(kw.as_bytes())
            && matches!(self.s.get(end), None | Some(b' ' | b'\t' | b'('))
    }

    /// expr := and ('OR' and)*
    fn expr(&mut self) -> PResult<FilterSpec> {
        let mut parts = vec![self.and()?];
        loop {
            self.skip_ws();
            if self.at_keyword("OR") {
                self.pos += 2;
                parts.push(self.and()?);
            } else {
                break;
            }
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            FilterSpec::List(ListOp::MustPassOne, parts)
        })
    }

    /// and := unary ('AND' unary)*
    fn and(&mut self) -> PResult<FilterSpec> {
        let mut parts = vec![self.unary()?];
        loop {
            self.skip_ws();
            if self.at_keyword("AND") {
                self.pos += 3;
                parts.push(self.unary()?);
            } else {
                break;
            }
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            FilterSpec::List(ListOp::MustPassAll, parts)
        })
    }

    /// unary := 'SKIP' unary | 'WHILE' unary | '(' expr ')' | filter
    fn unary(&mut self) -> PResult<FilterSpec> {
        self.skip_ws();
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return err(
                self.pos,
                format!("Incorrect Filter String: nested more than {MAX_NESTING} levels deep"),
            );
        }
        let out = self.unary_inner();
        self.depth -= 1;
        out
    }

    fn unary_inner(&mut self) -> PResult<FilterSpec> {
        if self.at_keyword("SKIP") {
            self.pos += 4;
            return Ok(FilterSpec::Skip(Box::new(self.unary()?)));
        }
        if self.at_keyword("WHILE") {
            self.pos += 5;
            return Ok(FilterSpec::WhileMatch(Box::new(self.unary()?)));
        }
        if self.peek() == Some(b'(') {
            let open = self.pos;
            self.pos += 1;
            let inner = self.expr()?;
            self.skip_ws();
            if self.peek() != Some(b')') {
                return err(open, "Mismatched parenthesis");
            }
            self.pos += 1;
            return Ok(inner);
        }
        self.filter()
    }

    fn filter(&mut self) -> PResult<FilterSpec> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            self.pos += 1;
        }
        if self.pos == start {
            return match self.peek() {
                None => err(start, "Incorrect Filter String: a filter is missing"),
                Some(c) => err(
                    start,
                    format!("Incorrect Filter String: unexpected '{}'", c as char),
                ),
            };
        }
        let name = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        // Fully qualified class names are accepted too.
        let short = name.rsplit('.').next().unwrap_or(&name).to_string();
        self.skip_ws();
        if self.peek() != Some(b'(') {
            return err(
                self.pos,
                format!("Incorrect Filter String: '(' expected after {name}"),
            );
        }
        self.pos += 1;
        let args = self.args()?;
        build(&short, &args, start)
    }

    fn args(&mut self) -> PResult<Vec<(Arg, usize)>> {
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return err(self.pos, "Mismatched parenthesis: ')' expected"),
                Some(b')') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b',') if !out.is_empty() => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let at = self.pos;
            out.push((self.arg()?, at));
        }
    }

    fn arg(&mut self) -> PResult<Arg> {
        let start = self.pos;
        match self.peek() {
            Some(b'\'') => {
                self.pos += 1;
                let mut v = Vec::new();
                loop {
                    match self.peek() {
                        None => return err(start, "Incorrect argument list: unterminated quote"),
                        Some(b'\'') if self.s.get(self.pos + 1) == Some(&b'\'') => {
                            v.push(b'\'');
                            self.pos += 2;
                        }
                        Some(b'\'') => {
                            self.pos += 1;
                            return Ok(Arg::Str(v));
                        }
                        Some(c) => {
                            v.push(c);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some(b'<' | b'>' | b'=' | b'!') => {
                while self
                    .peek()
                    .is_some_and(|c| matches!(c, b'<' | b'>' | b'=' | b'!'))
                {
                    self.pos += 1;
                }
                let t = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                CompareOp::from_name(&t)
                    .map(Arg::Op)
                    .ok_or_else(|| ParseError {
                        pos: start,
                        message: format!("Incorrect argument list: unknown compare operator '{t}'"),
                    })
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|c| !matches!(c, b',' | b')' | b' ' | b'\t' | b'('))
                {
                    self.pos += 1;
                }
                let t = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
                if t.is_empty() {
                    return err(start, "Incorrect argument list");
                }
                if t.eq_ignore_ascii_case("true") {
                    return Ok(Arg::Bool(true));
                }
                if t.eq_ignore_ascii_case("false") {
                    return Ok(Arg::Bool(false));
                }
                if let Some(op) = CompareOp::from_name(&t) {
                    return Ok(Arg::Op(op));
                }
                t.parse::<i64>().map(Arg::Int).map_err(|_| ParseError {
                    pos: start,
                    message: format!("Incorrect argument list: '{t}' is not a quoted string, number, boolean or operator"),
                })
            }
        }
    }
}

fn want_args(name: &str, args: &[(Arg, usize)], allowed: &[usize], pos: usize) -> PResult<()> {
    if allowed.contains(&args.len()) {
        Ok(())
    } else {
        err(
            pos,
            format!(
                "{name} takes {} argument(s), got {}",
                allowed
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
                args.len()
            ),
        )
    }
}

fn s(a: &(Arg, usize)) -> PResult<Vec<u8>> {
    match &a.0 {
        Arg::Str(v) => Ok(v.clone()),
        _ => err(a.1, "a quoted string was expected"),
    }
}

fn int(a: &(Arg, usize), min: i64, max: i64) -> PResult<i64> {
    match &a.0 {
        Arg::Int(i) if *i >= min && *i <= max => Ok(*i),
        Arg::Int(i) => err(a.1, format!("{i} is out of range ({min} to {max})")),
        _ => err(a.1, "an integer was expected"),
    }
}

fn boolean(a: &(Arg, usize)) -> PResult<bool> {
    match &a.0 {
        Arg::Bool(b) => Ok(*b),
        _ => err(a.1, "true or false was expected"),
    }
}

fn op(a: &(Arg, usize)) -> PResult<CompareOp> {
    match &a.0 {
        Arg::Op(o) => Ok(*o),
        _ => err(a.1, "a compare operator (<, <=, =, !=, >=, >) was expected"),
    }
}

fn comparator(a: &(Arg, usize)) -> PResult<Comparator> {
    let v = s(a)?;
    let Some(colon) = v.iter().position(|b| *b == b':') else {
        return err(a.1, "a comparator 'type:value' was expected");
    };
    let (kind, value) = (&v[..colon], v[colon + 1..].to_vec());
    match kind.to_ascii_lowercase().as_slice() {
        b"binary" => Ok(Comparator::Binary(value)),
        b"binaryprefix" => Ok(Comparator::BinaryPrefix(value)),
        b"regexstring" => {
            let c = Comparator::RegexString(String::from_utf8_lossy(&value).into_owned());
            // Checked here so that a bad pattern is a parse error naming its position.
            Comparable::compile(&c).map_err(|m| ParseError {
                pos: a.1,
                message: m,
            })?;
            Ok(c)
        }
        b"substring" => Ok(Comparator::substring(&String::from_utf8_lossy(&value))),
        other => err(
            a.1,
            format!(
                "unknown comparator type '{}'",
                String::from_utf8_lossy(other)
            ),
        ),
    }
}

fn only_eq(o: CompareOp, c: &Comparator, pos: usize) -> PResult<()> {
    let limited = matches!(c, Comparator::RegexString(..) | Comparator::Substring(_));
    if limited && !matches!(o, CompareOp::Equal | CompareOp::NotEqual) {
        return err(pos, "regexstring and substring only work with = and !=");
    }
    Ok(())
}

fn build(name: &str, a: &[(Arg, usize)], pos: usize) -> PResult<FilterSpec> {
    let i32max = i32::MAX as i64;
    Ok(match name {
        "KeyOnlyFilter" => {
            want_args(name, a, &[0, 1], pos)?;
            FilterSpec::KeyOnly {
                len_as_value: a.first().map(boolean).transpose()?.unwrap_or(false),
            }
        }
        "FirstKeyOnlyFilter" => {
            want_args(name, a, &[0], pos)?;
            FilterSpec::FirstKeyOnly
        }
        "PrefixFilter" => {
            want_args(name, a, &[1], pos)?;
            FilterSpec::Prefix(s(&a[0])?)
        }
        "ColumnPrefixFilter" => {
            want_args(name, a, &[1], pos)?;
            FilterSpec::ColumnPrefix(s(&a[0])?)
        }
        "MultipleColumnPrefixFilter" => {
            if a.is_empty() {
                return err(pos, "MultipleColumnPrefixFilter needs at least one prefix");
            }
            let mut ps = Vec::new();
            for x in a {
                let p = s(x)?;
                if ps.contains(&p) {
                    return err(x.1, "prefixes must be distinct");
                }
                ps.push(p);
            }
            FilterSpec::MultipleColumnPrefix(ps)
        }
        "ColumnCountGetFilter" => {
            want_args(name, a, &[1], pos)?;
            FilterSpec::ColumnCountGet(int(&a[0], 0, i32max)? as u32)
        }
        "PageFilter" => {
            want_args(name, a, &[1], pos)?;
            FilterSpec::Page(int(&a[0], 0, i64::MAX)? as u64)
        }
        "ColumnPaginationFilter" => {
            want_args(name, a, &[2], pos)?;
            FilterSpec::ColumnPagination {
                limit: int(&a[0], 0, i32max)? as u32,
                offset: int(&a[1], 0, i32max)? as u32,
                column_offset: None,
            }
        }
        "InclusiveStopFilter" => {
            want_args(name, a, &[1], pos)?;
            FilterSpec::InclusiveStop(s(&a[0])?)
        }
        "TimestampsFilter" => {
            let mut ts = Vec::new();
            for x in a {
                ts.push(int(x, 0, i64::MAX)?);
            }
            FilterSpec::Timestamps(ts)
        }
        "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
            want_args(name, a, &[2], pos)?;
            let (o, c) = (op(&a[0])?, comparator(&a[1])?);
            only_eq(o, &c, a[0].1)?;
            match name {
                "RowFilter" => FilterSpec::Row(o, c),
                "FamilyFilter" => FilterSpec::Family(o, c),
                "QualifierFilter" => FilterSpec::Qualifier(o, c),
                _ => FilterSpec::Value(o, c),
            }
        }
        "ColumnRangeFilter" => {
            want_args(name, a, &[4], pos)?;
            let min = s(&a[0])?;
            let max = s(&a[2])?;
            FilterSpec::ColumnRange {
                min: (!min.is_empty()).then_some(min),
                min_inclusive: boolean(&a[1])?,
                max: (!max.is_empty()).then_some(max),
                max_inclusive: boolean(&a[3])?,
            }
        }
        "ColumnValueFilter" => {
            want_args(name, a, &[4], pos)?;
            let (o, c) = (op(&a[2])?, comparator(&a[3])?);
            only_eq(o, &c, a[2].1)?;
            FilterSpec::ColumnValue {
                family: s(&a[0])?,
                qualifier: s(&a[1])?,
                op: o,
                comparator: c,
            }
        }
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
            want_args(name, a, &[4, 6], pos)?;
            let (o, c) = (op(&a[2])?, comparator(&a[3])?);
            only_eq(o, &c, a[2].1)?;
            FilterSpec::SingleColumnValue {
                family: s(&a[0])?,
                qualifier: s(&a[1])?,
                op: o,
                comparator: c,
                filter_if_missing: a.get(4).map(boolean).transpose()?.unwrap_or(false),
                latest_version_only: a.get(5).map(boolean).transpose()?.unwrap_or(true),
                exclude: name == "SingleColumnValueExcludeFilter",
            }
        }
        "DependentColumnFilter" => {
            want_args(name, a, &[2, 3, 5], pos)?;
            let compare = if a.len() == 5 {
                let (o, c) = (op(&a[3])?, comparator(&a[4])?);
                only_eq(o, &c, a[3].1)?;
                Some((o, c))
            } else {
                None
            };
            FilterSpec::DependentColumn {
                family: s(&a[0])?,
                qualifier: s(&a[1])?,
                drop_dependent: a.get(2).map(boolean).transpose()?.unwrap_or(false),
                compare,
            }
        }
        other => return err(pos, format!("Filter Name {other} not supported")),
    })
}

/// Parses a filter string.
pub fn parse_filter(text: &str) -> Result<FilterSpec, ParseError> {
    parse_filter_bytes(text.as_bytes())
}

/// Parses a filter string given as bytes (as HBase's `ParseFilter.parseFilterString`):
/// quoted arguments keep their bytes, UTF-8 or not.
pub fn parse_filter_bytes(text: &[u8]) -> Result<FilterSpec, ParseError> {
    let mut p = Parser {
        s: text,
        pos: 0,
        depth: 0,
    };
    p.skip_ws();
    if p.peek().is_none() {
        return err(0, "Incorrect Filter String: empty");
    }
    let spec = p.expr()?;
    p.skip_ws();
    match p.peek() {
        None => Ok(spec),
        Some(b')') => err(p.pos, "Mismatched parenthesis"),
        Some(_) => err(p.pos, "Incorrect Filter String: AND or OR expected"),
    }
}
