//! The Prometheus text exposition format (version 0.0.4), as node_exporter and iobm's gateway
//! write it: samples with their labels, read back without a crate.

/// One sample: `name{label="value",...} value [timestamp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Every sample of `text`; comments (`# HELP`, `# TYPE`), blank lines and lines that are not a
/// sample are skipped, so one odd line costs only itself.
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter_map(sample).collect()
}

fn sample(line: &str) -> Option<Sample> {
    let line = line.trim_start();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = line[name_end..].trim_start();
    let mut labels = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        let (parsed, after) = label_set(inner)?;
        labels = parsed;
        rest = after;
    }
    let mut fields = rest.split_whitespace();
    let value = number(fields.next()?)?;
    // A timestamp may follow; anything more is not a sample.
    if fields.nth(1).is_some() {
        return None;
    }
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// The labels after `{` up to the closing `}`, and what follows it.
fn label_set(mut s: &str) -> Option<(Vec<(String, String)>, &str)> {
    let mut labels = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(after) = s.strip_prefix('}') {
            return Some((labels, after));
        }
        let (name, after) = s.split_once('=')?;
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        let quoted = after.trim_start().strip_prefix('"')?;
        let mut chars = quoted.char_indices();
        let mut value = String::new();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                c => value.push(c),
            }
        };
        labels.push((name.to_string(), value));
        s = quoted[end + 1..].trim_start();
        s = s.strip_prefix(',').unwrap_or(s);
    }
}

fn number(s: &str) -> Option<f64> {
    match s {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_with_and_without_labels_are_read() {
        let text = "# HELP node_memory_Cached_bytes Memory information field Cached_bytes.\n\
            # TYPE node_memory_Cached_bytes gauge\n\
            node_memory_Cached_bytes 1.2345e+09\n\
            \n\
            node_disk_read_bytes_total{device=\"vda\"} 3.3133773824e+10\n\
            node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 12345.67 1700000000000\n\
            node_network_receive_bytes_total{ device = \"eth0\" , } 42\n";
        let s = parse(text);
        assert_eq!(s.len(), 4, "{s:?}");
        assert_eq!(s[0].name, "node_memory_Cached_bytes");
        assert!(s[0].labels.is_empty());
        assert_eq!(s[0].value, 1.2345e9);
        assert_eq!(s[1].label("device"), Some("vda"));
        assert_eq!(s[1].value, 33_133_773_824.0);
        // A timestamp after the value is not the value.
        assert_eq!(s[2].value, 12345.67);
        assert_eq!(
            (s[2].label("cpu"), s[2].label("mode")),
            (Some("0"), Some("idle"))
        );
        // Spaces inside the braces and a trailing comma.
        assert_eq!(s[3].label("device"), Some("eth0"));
        assert_eq!(s[3].value, 42.0);
    }

    #[test]
    fn escaped_label_values_and_special_numbers_are_read() {
        let s = parse(
            "m{a=\"x\\\"y\",b=\"back\\\\slash\",c=\"two\\nlines\",d=\"}{,=\"} +Inf\nm NaN\nm -Inf\n",
        );
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!(s[0].label("a"), Some("x\"y"));
        assert_eq!(s[0].label("b"), Some("back\\slash"));
        assert_eq!(s[0].label("c"), Some("two\nlines"));
        assert_eq!(s[0].label("d"), Some("}{,="));
        assert_eq!(s[0].value, f64::INFINITY);
        assert!(s[1].value.is_nan());
        assert_eq!(s[2].value, f64::NEG_INFINITY);
    }

    #[test]
    fn lines_that_are_not_samples_are_skipped() {
        let s = parse(
            "<html>not metrics</html>\n\
             m{a=\"unterminated} 1\n\
             m{a=\"1\"}\n\
             m 1 2 3\n\
             9lives 1\n\
             m{=\"x\"} 1\n\
             ok_total 7\n",
        );
        assert_eq!(
            s,
            vec![Sample {
                name: "ok_total".into(),
                labels: vec![],
                value: 7.0
            }]
        );
    }
}
