//! A finding's evidence: the figures behind its words, by name (`numbers` in JSON). A figure is
//! typed as it was measured: a count, a rate or share, a flag, a name or path, a list or a
//! record (a process with its rates), or absent where it could not be had.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One figure. Counts stay integers in JSON (`3`), measured quantities are numbers (`3.0`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Figure {
    Flag(bool),
    Count(u64),
    Signed(i64),
    Number(f64),
    Text(String),
    List(Vec<Figure>),
    Record(BTreeMap<String, Figure>),
    Absent,
}

impl Figure {
    /// Its value as a number, where it is one (a flag is 1 or 0).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Figure::Count(n) => Some(n as f64),
            Figure::Signed(n) => Some(n as f64),
            Figure::Number(n) => Some(n),
            Figure::Flag(b) => Some(if b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }
}

impl PartialEq<f64> for Figure {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

impl From<f64> for Figure {
    fn from(n: f64) -> Self {
        Figure::Number(n)
    }
}

impl From<u64> for Figure {
    fn from(n: u64) -> Self {
        Figure::Count(n)
    }
}

impl From<u32> for Figure {
    fn from(n: u32) -> Self {
        Figure::Count(n.into())
    }
}

impl From<usize> for Figure {
    fn from(n: usize) -> Self {
        Figure::Count(n as u64)
    }
}

impl From<i64> for Figure {
    fn from(n: i64) -> Self {
        Figure::Signed(n)
    }
}

impl From<bool> for Figure {
    fn from(b: bool) -> Self {
        Figure::Flag(b)
    }
}

impl From<&str> for Figure {
    fn from(s: &str) -> Self {
        Figure::Text(s.to_string())
    }
}

impl From<String> for Figure {
    fn from(s: String) -> Self {
        Figure::Text(s)
    }
}

impl From<&std::path::Path> for Figure {
    fn from(p: &std::path::Path) -> Self {
        Figure::Text(p.display().to_string())
    }
}

impl Figure {
    /// A record of named figures (a process with its bytes).
    pub fn record<const N: usize>(fields: [(&str, Figure); N]) -> Self {
        Figure::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
}

impl<T: Into<Figure>> From<Option<T>> for Figure {
    fn from(o: Option<T>) -> Self {
        o.map_or(Figure::Absent, Into::into)
    }
}

impl<T: Into<Figure>> From<Vec<T>> for Figure {
    fn from(v: Vec<T>) -> Self {
        Figure::List(v.into_iter().map(Into::into).collect())
    }
}

/// The figures behind a finding, by name, in name order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Evidence(BTreeMap<Cow<'static, str>, Figure>);

impl Evidence {
    pub fn new() -> Self {
        Self::default()
    }

    /// With one more figure.
    pub fn with(mut self, name: &'static str, value: impl Into<Figure>) -> Self {
        self.insert(name, value);
        self
    }

    /// With a figure where it was had; without its name where it was not.
    pub fn with_some<T: Into<Figure>>(self, name: &'static str, value: Option<T>) -> Self {
        match value {
            Some(v) => self.with(name, v),
            None => self,
        }
    }

    pub fn insert(&mut self, name: &'static str, value: impl Into<Figure>) {
        self.0.insert(Cow::Borrowed(name), value.into());
    }

    pub fn get(&self, name: &str) -> Option<&Figure> {
        self.0.get(name)
    }

    /// The figure `name` as a number (0 where there is none: a finding's words read only
    /// figures it put in).
    pub fn num(&self, name: &str) -> f64 {
        self.get(name).and_then(Figure::as_f64).unwrap_or(0.0)
    }

    /// The figure `name` as a count.
    pub fn count(&self, name: &str) -> u64 {
        self.num(name).max(0.0) as u64
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every figure, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Figure)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// Figures given as JSON (an object; anything else gives none).
    pub fn from_json(v: serde_json::Value) -> Self {
        serde_json::from_value(v).unwrap_or_default()
    }
}

impl std::ops::Index<&str> for Evidence {
    type Output = Figure;
    fn index(&self, name: &str) -> &Figure {
        self.0
            .get(name)
            .unwrap_or_else(|| panic!("no figure {name} in {self:?}"))
    }
}

impl<const N: usize> From<[(&'static str, f64); N]> for Evidence {
    fn from(figures: [(&'static str, f64); N]) -> Self {
        figures.into_iter().collect()
    }
}

impl FromIterator<(&'static str, f64)> for Evidence {
    fn from_iter<I: IntoIterator<Item = (&'static str, f64)>>(it: I) -> Self {
        Self(
            it.into_iter()
                .map(|(k, v)| (Cow::Borrowed(k), Figure::Number(v)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON is what the two models before it wrote: measured figures as numbers (`0.5`,
    /// `3.0`), counts as integers, names as strings, null for what could not be had; and it
    /// reads back the same.
    #[test]
    fn figures_keep_their_types_in_json_and_back() {
        let e = Evidence::new()
            .with("f/s", 128.0)
            .with("flushes", 3.0)
            .with("ioerr_cnt", 3u64)
            .with("alignment_offset", -512i64)
            .with("backing_file", "/srv/a.img")
            .with("direct_io", false)
            .with("d2c_mean_us", None::<f64>)
            .with("uses", vec!["sda1 mounted at /"]);
        let json = serde_json::to_string(&e).unwrap();
        println!("{json}");
        assert_eq!(
            json,
            r#"{"alignment_offset":-512,"backing_file":"/srv/a.img","d2c_mean_us":null,"direct_io":false,"f/s":128.0,"flushes":3.0,"ioerr_cnt":3,"uses":["sda1 mounted at /"]}"#
        );
        let back: Evidence = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert_eq!(e["flushes"], 3.0);
        assert_eq!(e.num("ioerr_cnt"), 3.0);
        assert_eq!(e.count("f/s"), 128);
        assert_eq!(e.num("none"), 0.0);
        let from =
            Evidence::from_json(serde_json::json!({"processes": [{"pid": 7, "comm": "dd"}]}));
        assert_eq!(
            serde_json::to_string(&from).unwrap(),
            r#"{"processes":[{"comm":"dd","pid":7}]}"#
        );
    }
}
