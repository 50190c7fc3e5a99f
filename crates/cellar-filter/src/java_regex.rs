//! Regular expressions as HBase's `RegexStringComparator` runs them: `java.util.regex`
//! with DOTALL, `find()` anywhere in the value, the value's bytes read as ISO-8859-1 (one
//! byte, one character). Patterns the linear engine (`regex`, unicode off, so `\w`, `\d`,
//! `\s` and case folding are ASCII as in Java) can run exactly go to it; look-around,
//! back-references, atomic groups, possessive quantifiers and Java's `$` (which also
//! matches before a final line terminator) go to a backtracking engine (`fancy-regex`)
//! over the value decoded as ISO-8859-1. Java-only syntax is translated first: `\Q…\E`
//! quoting and the POSIX classes `\p{Lower}`, `\p{Alpha}`, … (ASCII in Java).

use std::fmt;

/// A compiled pattern.
#[derive(Clone)]
pub enum JavaRegex {
    Linear(regex::bytes::Regex),
    Backtracking(fancy_regex::Regex),
}

impl fmt::Debug for JavaRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JavaRegex::Linear(r) => write!(f, "Linear({})", r.as_str()),
            JavaRegex::Backtracking(r) => write!(f, "Backtracking({})", r.as_str()),
        }
    }
}

/// Java's POSIX character classes (US-ASCII only unless UNICODE_CHARACTER_CLASS).
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "Lower" => "lower",
        "Upper" => "upper",
        "ASCII" => "ascii",
        "Alpha" => "alpha",
        "Digit" => "digit",
        "Alnum" => "alnum",
        "Punct" => "punct",
        "Graph" => "graph",
        "Print" => "print",
        "Blank" => "blank",
        "Cntrl" => "cntrl",
        "XDigit" => "xdigit",
        "Space" => "space",
        _ => return None,
    })
}

/// ASCII forms of Java's default shorthand classes, for the Unicode-aware engine.
fn ascii_shorthand(c: char) -> Option<(&'static str, bool)> {
    Some(match c {
        'w' => ("0-9A-Za-z_", false),
        'W' => ("0-9A-Za-z_", true),
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        's' => ("\\t\\n\\x0B\\x0C\\r ", false),
        'S' => ("\\t\\n\\x0B\\x0C\\r ", true),
        _ => return None,
    })
}

/// The pattern rewritten for one engine; `backtracking` says which.
struct Translation {
    text: String,
    /// Something only the backtracking engine can run.
    needs_backtracking: bool,
}

fn escape_literal(c: char, for_bytes: bool, out: &mut String) {
    if for_bytes && (c as u32) >= 0x80 && (c as u32) <= 0xff {
        out.push_str(&format!("\\x{:02X}", c as u32));
    } else if c.is_ascii_alphanumeric() || (c as u32) >= 0x80 {
        out.push(c);
    } else {
        out.push('\\');
        out.push(c);
    }
}

fn translate(pattern: &str, for_bytes: bool) -> Translation {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut needs_backtracking = false;
    let mut class_depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    out.push('\\');
                    i += 1;
                    continue;
                };
                match n {
                    'Q' => {
                        // Quoted up to \E (or the end).
                        i += 2;
                        while i < chars.len()
                            && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E'))
                        {
                            escape_literal(chars[i], for_bytes, &mut out);
                            i += 1;
                        }
                        i += 2;
                        continue;
                    }
                    'p' | 'P' if chars.get(i + 2) == Some(&'{') => {
                        let end = chars[i + 3..].iter().position(|x| *x == '}');
                        if let Some(len) = end {
                            let name: String = chars[i + 3..i + 3 + len].iter().collect();
                            let name = name.strip_prefix("Is").unwrap_or(&name);
                            if let Some(cls) = posix_class(name) {
                                let neg = if n == 'P' { "^" } else { "" };
                                if class_depth > 0 {
                                    out.push_str(&format!("[:{neg}{cls}:]"));
                                } else {
                                    out.push_str(&format!("[[:{neg}{cls}:]]"));
                                }
                                i += 4 + len;
                                continue;
                            }
                        }
                        out.push('\\');
                        out.push(n);
                        i += 2;
                        continue;
                    }
                    '1'..='9' | 'k' => needs_backtracking = true,
                    'Z' | 'G' => needs_backtracking = true,
                    _ => {}
                }
                if !for_bytes {
                    if let Some((set, neg)) = ascii_shorthand(n) {
                        let neg = if neg { "^" } else { "" };
                        if class_depth > 0 && !neg.is_empty() {
                            // A negated shorthand inside a class: keep Java's meaning
                            // approximately with the engine's own.
                            out.push('\\');
                            out.push(n);
                        } else if class_depth > 0 {
                            out.push_str(set);
                        } else {
                            out.push_str(&format!("[{neg}{set}]"));
                        }
                        i += 2;
                        continue;
                    }
                }
                if (n as u32) >= 0x80 {
                    escape_literal(n, for_bytes, &mut out);
                } else {
                    out.push('\\');
                    out.push(n);
                }
                i += 2;
                continue;
            }
            '[' => {
                class_depth += 1;
                out.push('[');
                // A ']' right after '[' or '[^' is a literal in Java.
                if chars.get(i + 1) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i + 1) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
            }
            ']' if class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            '$' if class_depth == 0 => {
                // Java: the end, or just before a final line terminator.
                needs_backtracking = true;
                out.push_str("(?:\\z|(?=(?:\\r\\n|[\\n\\r\\x{85}\\x{2028}\\x{2029}])\\z))");
            }
            '(' if class_depth == 0 && chars.get(i + 1) == Some(&'?') => {
                match chars.get(i + 2) {
                    Some('=' | '!' | '>') => needs_backtracking = true,
                    Some('<') if matches!(chars.get(i + 3), Some('=' | '!')) => {
                        needs_backtracking = true
                    }
                    _ => {}
                }
                out.push('(');
            }
            '+' if class_depth == 0 && i > 0 && matches!(chars[i - 1], '*' | '+' | '?' | '}') => {
                // A possessive quantifier.
                needs_backtracking = true;
                out.push('+');
            }
            _ if class_depth > 0 || !"*+?{}().|^".contains(c) => {
                if (c as u32) >= 0x80 {
                    escape_literal(c, for_bytes, &mut out);
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Translation {
        text: out,
        needs_backtracking,
    }
}

impl JavaRegex {
    /// Compiles `pattern` (Java syntax).
    pub fn new(pattern: &str) -> Result<JavaRegex, String> {
        let linear = translate(pattern, true);
        let mut linear_error = None;
        if !linear.needs_backtracking {
            match regex::bytes::RegexBuilder::new(&linear.text)
                .unicode(false)
                .dot_matches_new_line(true)
                .build()
            {
                Ok(re) => return Ok(JavaRegex::Linear(re)),
                Err(e) => linear_error = Some(e.to_string()),
            }
        }
        let back = translate(pattern, false);
        fancy_regex::Regex::new(&format!("(?s){}", back.text))
            .map(JavaRegex::Backtracking)
            .map_err(|e| {
                format!(
                    "bad regular expression '{pattern}': {}",
                    linear_error.unwrap_or_else(|| e.to_string())
                )
            })
    }

    /// Whether the pattern is found in `value` (Java's `Matcher.find`).
    pub fn find(&self, value: &[u8]) -> bool {
        match self {
            JavaRegex::Linear(re) => re.is_match(value),
            JavaRegex::Backtracking(re) => {
                let text: String = value.iter().map(|b| *b as char).collect();
                // A pattern too costly to decide (the engine's backtrack limit) does not
                // match, rather than failing the read.
                re.is_match(&text).unwrap_or(false)
            }
        }
    }

    /// Which engine runs the pattern.
    pub fn is_backtracking(&self) -> bool {
        matches!(self, JavaRegex::Backtracking(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(p: &str, v: &[u8]) -> bool {
        JavaRegex::new(p).unwrap_or_else(|e| panic!("{e}")).find(v)
    }

    /// Expected results are what `Pattern.compile(p, Pattern.DOTALL).matcher(new
    /// String(v, ISO_8859_1)).find()` gives.
    #[test]
    fn java_semantics() {
        // Plain patterns stay on the linear engine.
        assert!(!JavaRegex::new("^ab.c").unwrap().is_backtracking());
        assert!(find("^ab.c", b"ab\ncd"), "DOTALL");
        assert!(find("b+", b"abbbc"), "find, not matches");
        assert!(!find("^b", b"abc"));
        // Look-around, back-references, atomic groups, possessive quantifiers.
        assert!(find("foo(?=bar)", b"foobar"));
        assert!(!find("foo(?=bar)", b"foobaz"));
        assert!(find("(?<=a)b", b"ab"));
        assert!(!find("(?<!a)b", b"ab"));
        assert!(find("(a|b)\\1", b"xbb"));
        assert!(!find("(a|b)\\1", b"xab"));
        assert!(!find("^(?>a|ab)c", b"abc"));
        assert!(!find("^a*+a", b"aaaa"));
        assert!(JavaRegex::new("foo(?=bar)").unwrap().is_backtracking());
        // Java's $ also matches before a final line terminator.
        assert!(find("abc$", b"abc\n"));
        assert!(find("abc$", b"abc\r\n"));
        assert!(!find("abc$", b"abc\nx"));
        assert!(find("abc\\z", b"abc"));
        assert!(!find("abc\\z", b"abc\n"));
        // Quoting and POSIX classes.
        assert!(find("\\Q.*\\E", b"a.*b"));
        assert!(!find("\\Q.*\\E", b"ab"));
        assert!(find("^\\p{Lower}+$", b"abc"));
        assert!(!find("^\\p{Lower}+$", b"aBc"));
        assert!(find("[\\p{Digit}x]", b"--x"));
        // Values are ISO-8859-1: one byte, one character; \w is ASCII.
        assert!(find("^.$", &[0xe9]));
        assert!(find("\u{e9}", &[0x41, 0xe9]));
        assert!(
            !find("\u{e9}", "é".as_bytes()),
            "UTF-8 é is two Latin-1 characters"
        );
        assert!(!find("^\\w$", &[0xe9]));
        assert!(
            !find("(?<!z)^\\w$", &[0xe9]),
            "ASCII \\w on the backtracking engine"
        );
        assert!(find("(?<!z)^\\w$", b"k"));
        assert!(find("(?i)ABC", b"xabcx"));
        assert!(JavaRegex::new("(").is_err());
        assert!(JavaRegex::new("a(?=").is_err());
    }
}
