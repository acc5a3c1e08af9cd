//! Just enough XML for S3's answers: the text of every element with a given name, unescaped.
//! S3 answers are flat and small (listings, upload ids, errors); no schema is needed.

/// The unescaped text of each `<tag>...</tag>` in `xml`, in order.
pub fn texts<'a>(xml: &'a str, tag: &'a str) -> impl Iterator<Item = String> + 'a {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut rest = xml;
    std::iter::from_fn(move || {
        let start = rest.find(&open)? + open.len();
        let len = rest[start..].find(&close)?;
        let text = unescape(&rest[start..start + len]);
        rest = &rest[start + len + close.len()..];
        Some(text)
    })
}

/// The first `<tag>` text, if any.
pub fn text(xml: &str, tag: &str) -> Option<String> {
    texts(xml, tag).next()
}

pub fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').unwrap_or(0);
        let entity = &rest[1..end.max(1)];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) if end > 0 => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_unescapes() {
        let xml = "<R><Contents><Key>a&amp;b</Key></Contents><Contents><Key>c&#x41;&#66;</Key></Contents>\
                   <IsTruncated>true</IsTruncated></R>";
        assert_eq!(texts(xml, "Key").collect::<Vec<_>>(), vec!["a&b", "cAB"]);
        assert_eq!(text(xml, "IsTruncated").as_deref(), Some("true"));
        assert_eq!(text(xml, "Nope"), None);
        assert_eq!(unescape("x & y"), "x & y");
        assert_eq!(escape("<a&\">"), "&lt;a&amp;&quot;&gt;");
    }
}
