//! Hosts from the files people already keep: a hosts file (one host or pattern a line), and an
//! Ansible inventory (INI, YAML, or the JSON of `ansible-inventory --list`), all of it or one
//! group with its children (`--inventory hosts.yml:storage`). A host's `ansible_host`,
//! `ansible_port` and `ansible_user` say how to reach it; its inventory name labels it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::host::{Host, MOST_HOSTS};

/// Hosts from a file: one host or pattern a line, `#` comments and blank lines ignored.
pub fn read_hosts_file(path: &Path) -> Result<Vec<Host>, crate::Error> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
    let mut hosts = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let more = Host::parse_pattern(l)
            .map_err(|e| crate::Error::Usage(format!("{}:{}: {e}", path.display(), i + 1)))?;
        hosts.extend(more);
        if hosts.len() > MOST_HOSTS {
            return Err(crate::Error::Usage(format!(
                "{}: more than {MOST_HOSTS} hosts: is a range mistyped?",
                path.display()
            )));
        }
    }
    Ok(hosts)
}

/// An inventory as groups of host names, and each host's variables.
#[derive(Debug, Default)]
struct Inventory {
    /// Hosts in the order the file first names them.
    order: Vec<String>,
    vars: BTreeMap<String, BTreeMap<String, String>>,
    groups: BTreeMap<String, Group>,
}

#[derive(Debug, Default)]
struct Group {
    hosts: Vec<String>,
    children: Vec<String>,
}

impl Inventory {
    fn add_host(&mut self, group: &str, name: &str, vars: BTreeMap<String, String>) {
        if !self.vars.contains_key(name) {
            self.order.push(name.to_string());
        }
        self.vars.entry(name.to_string()).or_default().extend(vars);
        // A host named twice in a group is selected once (`select` goes by `order`).
        let g = self.groups.entry(group.to_string()).or_default();
        g.hosts.push(name.to_string());
    }

    fn add_child(&mut self, group: &str, child: &str) {
        self.groups.entry(child.to_string()).or_default();
        let g = self.groups.entry(group.to_string()).or_default();
        if !g.children.iter().any(|c| c == child) {
            g.children.push(child.to_string());
        }
    }

    /// The hosts of `group` and of its children, in file order; every host for `all` or none.
    fn select(&self, group: Option<&str>) -> Result<Vec<String>, String> {
        let Some(group) = group.filter(|g| *g != "all") else {
            return Ok(self.order.clone());
        };
        if !self.groups.contains_key(group) {
            let known: Vec<&str> = self.groups.keys().map(String::as_str).collect();
            return Err(format!(
                "no group '{group}' in it (its groups: {})",
                known.join(", ")
            ));
        }
        let (mut seen, mut todo) = (Vec::new(), vec![group.to_string()]);
        let mut names = std::collections::HashSet::new();
        while let Some(g) = todo.pop() {
            if seen.contains(&g) {
                continue;
            }
            if let Some(grp) = self.groups.get(&g) {
                names.extend(grp.hosts.iter().map(String::as_str));
                todo.extend(grp.children.iter().cloned());
            }
            seen.push(g);
        }
        Ok(self
            .order
            .iter()
            .filter(|h| names.contains(h.as_str()))
            .cloned()
            .collect())
    }

    /// The host `name` as ssh reaches it: its `ansible_host`, `ansible_port`, `ansible_user`.
    fn host(&self, name: &str) -> Result<Host, String> {
        let vars = self.vars.get(name);
        let var = |k: &str| {
            vars.and_then(|v| {
                v.get(&format!("ansible_{k}"))
                    .or_else(|| v.get(&format!("ansible_ssh_{k}")))
            })
        };
        let addr = var("host").map_or(name, String::as_str);
        let (addr, port) = match addr.rsplit_once(':') {
            Some((a, p)) if !a.contains(':') && p.parse::<u16>().is_ok() => (a, Some(p)),
            _ => (addr, None),
        };
        let port = var("port").map(String::as_str).or(port);
        let mut dest = match var("user") {
            Some(u) => format!("{u}@"),
            None => String::new(),
        };
        match port {
            Some(p) if addr.contains(':') => dest.push_str(&format!("[{addr}]:{p}")),
            Some(p) => dest.push_str(&format!("{addr}:{p}")),
            None => dest.push_str(addr),
        }
        let mut h = Host::parse(&dest).map_err(|e| format!("host {name}: {e}"))?;
        if name.starts_with('-') {
            return Err(format!("host {name}: a name that begins with '-'"));
        }
        h.label = name.to_string();
        Ok(h)
    }
}

/// `FILE` or `FILE:GROUP` as given to `--inventory`: the whole when such a file exists.
pub fn split_inventory_arg(arg: &str) -> (&str, Option<&str>) {
    if Path::new(arg).exists() {
        return (arg, None);
    }
    match arg.rsplit_once(':') {
        Some((f, g)) if !g.is_empty() && !g.contains('/') => (f, Some(g)),
        _ => (arg, None),
    }
}

/// The hosts of an Ansible inventory, or of one of its groups (with its children).
pub fn read_inventory(arg: &str) -> Result<Vec<Host>, crate::Error> {
    let (file, group) = split_inventory_arg(arg);
    let path = Path::new(file);
    let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
    let usage = |e: String| crate::Error::Usage(format!("{file}: {e}"));
    let inv = parse_inventory(&text, path).map_err(usage)?;
    let names = inv.select(group).map_err(usage)?;
    if names.is_empty() {
        return Err(usage(match group {
            Some(g) => format!("the group '{g}' has no hosts"),
            None => "no hosts in it".into(),
        }));
    }
    names.iter().map(|n| inv.host(n).map_err(usage)).collect()
}

/// An inventory's text, in the format its first characters and its name say.
fn parse_inventory(text: &str, path: &Path) -> Result<Inventory, String> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    let yaml_name = path.extension().is_some_and(|e| e == "yml" || e == "yaml");
    if first.starts_with('{') {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if is_listing(&v) {
            listing(&v)
        } else {
            tree(&v)
        }
    } else if yaml_name || first == "---" || (first.ends_with(':') && !first.starts_with('[')) {
        tree(&yaml_to_json(text)?)
    } else {
        ini(text)
    }
}

/// The JSON of `ansible-inventory --list`: groups whose `hosts` are arrays, `_meta.hostvars`.
fn is_listing(v: &Value) -> bool {
    v.get("_meta").is_some()
        || v.as_object().is_some_and(|m| {
            m.values()
                .any(|g| g["hosts"].is_array() || g["children"].is_array())
        })
}

fn listing(v: &Value) -> Result<Inventory, String> {
    let mut inv = Inventory::default();
    let Some(groups) = v.as_object() else {
        return Err("not an inventory: the top is not an object".into());
    };
    let hostvars = &v["_meta"]["hostvars"];
    for (name, g) in groups.iter().filter(|(n, _)| *n != "_meta") {
        for h in g["hosts"].as_array().into_iter().flatten() {
            let h = h.as_str().ok_or("a host that is not a string")?;
            inv.add_host(name, h, strings(&hostvars[h]));
        }
        for c in g["children"].as_array().into_iter().flatten() {
            inv.add_child(
                name,
                c.as_str().ok_or("a child group that is not a string")?,
            );
        }
    }
    Ok(inv)
}

/// The YAML inventory format (also written as JSON): groups with `hosts` (a map from host
/// pattern to its variables) and `children` (a map of groups), from the top.
fn tree(v: &Value) -> Result<Inventory, String> {
    let mut inv = Inventory::default();
    let Some(top) = v.as_object() else {
        return Err("not an inventory: the top is not a map of groups".into());
    };
    for (name, g) in top {
        tree_group(&mut inv, name, g, 0)?;
    }
    Ok(inv)
}

fn tree_group(inv: &mut Inventory, name: &str, g: &Value, depth: usize) -> Result<(), String> {
    if depth > 64 {
        return Err(format!("group {name}: children nested more than 64 deep"));
    }
    inv.groups.entry(name.to_string()).or_default();
    if let Some(hosts) = g["hosts"].as_object() {
        for (pattern, vars) in hosts {
            for h in ansible_range(pattern)? {
                inv.add_host(name, &h, strings(vars));
            }
        }
    }
    if let Some(children) = g["children"].as_object() {
        for (child, cg) in children {
            inv.add_child(name, child);
            tree_group(inv, child, cg, depth + 1)?;
        }
    }
    Ok(())
}

/// The INI inventory format: `[group]` sections of `host key=value ...` lines,
/// `[group:children]` sections of group names; `[group:vars]` is not about hosts.
fn ini(text: &str) -> Result<Inventory, String> {
    let mut inv = Inventory::default();
    let mut section = ("ungrouped".to_string(), "");
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(head) = l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = match head.split_once(':') {
                Some((g, "children")) => (g.to_string(), "children"),
                Some((g, "vars")) => (g.to_string(), "vars"),
                Some((_, k)) => return Err(format!("line {}: unknown section kind '{k}'", i + 1)),
                None => (head.to_string(), ""),
            };
            inv.groups.entry(section.0.clone()).or_default();
            continue;
        }
        let mut words = l.split_whitespace();
        let name = words.next().unwrap_or_default();
        match section.1 {
            "children" => inv.add_child(&section.0, name),
            "vars" => {}
            _ => {
                let vars = words
                    .filter_map(|w| w.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.trim_matches(['"', '\'']).to_string()))
                    .collect::<BTreeMap<_, _>>();
                let names = ansible_range(name).map_err(|e| format!("line {}: {e}", i + 1))?;
                for h in names {
                    inv.add_host(&section.0, &h, vars.clone());
                }
            }
        }
    }
    Ok(inv)
}

/// A host's variables as text (numbers as written).
fn strings(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k.clone(), s.clone())),
            Value::Number(n) => Some((k.clone(), n.to_string())),
            _ => None,
        })
        .collect()
}

/// Ansible's host ranges: `web[01:50].example.com`, `db-[a:f]`, a stride `[0:50:2]`.
fn ansible_range(pattern: &str) -> Result<Vec<String>, String> {
    let Some(open) = pattern.find('[') else {
        return Ok(vec![pattern.to_string()]);
    };
    let close = pattern[open..]
        .find(']')
        .map(|c| c + open)
        .ok_or_else(|| format!("'{pattern}': a '[' without its ']'"))?;
    let inside = &pattern[open + 1..close];
    let bad = || format!("'{pattern}': [{inside}] is not a range such as [01:50] or [a:f]");
    let mut parts = inside.split(':');
    let (a, b) = (parts.next().ok_or_else(bad)?, parts.next().ok_or_else(bad)?);
    let step = match parts.next() {
        Some(s) => s.parse::<usize>().ok().filter(|s| *s > 0).ok_or_else(bad)?,
        None => 1,
    };
    let values: Vec<String> = match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(lo), Ok(hi)) if lo <= hi && hi - lo < MOST_HOSTS as u64 => {
            let width = if a.starts_with('0') { a.len() } else { 0 };
            (lo..=hi)
                .step_by(step)
                .map(|n| format!("{n:0width$}"))
                .collect()
        }
        _ => {
            let (ca, cb) = (single(a).ok_or_else(bad)?, single(b).ok_or_else(bad)?);
            if ca > cb {
                return Err(bad());
            }
            (ca..=cb).step_by(step).map(String::from).collect()
        }
    };
    let rest = ansible_range(&pattern[close + 1..])?;
    if values.len().saturating_mul(rest.len()) > MOST_HOSTS {
        return Err(format!("'{pattern}': more than {MOST_HOSTS} hosts"));
    }
    let head = &pattern[..open];
    Ok(values
        .iter()
        .flat_map(|v| rest.iter().map(move |r| format!("{head}{v}{r}")))
        .collect())
}

/// A one-letter bound.
fn single(s: &str) -> Option<char> {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(ch), None) if ch.is_ascii_alphabetic() => Some(ch),
        _ => None,
    }
}

/// YAML as JSON values (maps' keys as text), through yaml-rust2.
fn yaml_to_json(text: &str) -> Result<Value, String> {
    use yaml_rust2::{Yaml, YamlLoader};
    fn conv(y: &Yaml) -> Value {
        match y {
            Yaml::Real(r) => r.parse::<f64>().map(Value::from).unwrap_or(Value::Null),
            Yaml::Integer(i) => Value::from(*i),
            Yaml::String(s) => Value::from(s.clone()),
            Yaml::Boolean(b) => Value::from(*b),
            Yaml::Array(a) => Value::Array(a.iter().map(conv).collect()),
            Yaml::Hash(h) => Value::Object(
                h.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            Yaml::String(s) => s.clone(),
                            Yaml::Integer(i) => i.to_string(),
                            Yaml::Real(r) => r.clone(),
                            Yaml::Boolean(b) => b.to_string(),
                            _ => String::new(),
                        };
                        (key, conv(v))
                    })
                    .collect(),
            ),
            _ => Value::Null,
        }
    }
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
    Ok(docs.first().map(conv).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(text: &str, name: &str, group: Option<&str>) -> Vec<(String, String)> {
        let inv = parse_inventory(text, Path::new(name)).unwrap();
        inv.select(group)
            .unwrap()
            .iter()
            .map(|n| {
                let h = inv.host(n).unwrap();
                (
                    h.label.clone(),
                    h.destination() + &h.port.map(|p| format!(":{p}")).unwrap_or_default(),
                )
            })
            .collect()
    }

    const INI: &str = "\
mail.example.com

[web]
web[01:03].example.com
foo ansible_host=10.0.0.5 ansible_port=2222 ansible_user=admin

[db]
db-[a:b] ansible_user=root

[storage:children]
db

[storage:vars]
ntp=x
";

    #[test]
    fn ini_inventories_with_groups_children_ranges_and_host_vars() {
        let all = hosts(INI, "hosts", None);
        println!("{all:?}");
        assert_eq!(all.len(), 7);
        assert_eq!(all[0].0, "mail.example.com");
        assert_eq!(all[3].0, "web03.example.com");
        assert_eq!(all[4], ("foo".into(), "admin@10.0.0.5:2222".into()));
        let storage = hosts(INI, "hosts", Some("storage"));
        assert_eq!(
            storage,
            [
                ("db-a".to_string(), "root@db-a".to_string()),
                ("db-b".into(), "root@db-b".into())
            ]
        );
        let e = parse_inventory(INI, Path::new("hosts"))
            .unwrap()
            .select(Some("nope"))
            .unwrap_err();
        assert!(e.contains("its groups: db, storage, ungrouped, web"), "{e}");
    }

    #[test]
    fn yaml_inventories_and_the_json_of_ansible_inventory_list() {
        let yaml = "\
all:
  hosts:
    mail.example.com:
  children:
    storage:
      hosts:
        s[1:4:2]:
          ansible_port: 2200
      children:
        nvme:
          hosts:
            n1:
              ansible_host: 192.0.2.7
";
        let all = hosts(yaml, "hosts.yml", None);
        println!("{all:?}");
        assert_eq!(all.len(), 4);
        let storage = hosts(yaml, "hosts.yml", Some("storage"));
        assert_eq!(
            storage,
            [
                ("s1".to_string(), "s1:2200".to_string()),
                ("s3".into(), "s3:2200".into()),
                ("n1".into(), "192.0.2.7".into())
            ]
        );
        let listing = r#"{"_meta": {"hostvars": {"n1": {"ansible_host": "192.0.2.7", "ansible_port": 22}}},
            "all": {"children": ["ungrouped", "storage"]},
            "storage": {"hosts": ["s1"], "children": ["nvme"]},
            "nvme": {"hosts": ["n1"]},
            "ungrouped": {"hosts": ["mail"]}}"#;
        let storage = hosts(listing, "inv.json", Some("storage"));
        assert_eq!(
            storage,
            [
                ("n1".to_string(), "192.0.2.7:22".to_string()),
                ("s1".into(), "s1".into())
            ]
        );
        assert_eq!(hosts(listing, "inv.json", None).len(), 3);
    }

    #[test]
    fn ranges_and_names_that_are_not_hosts_are_refused() {
        for (bad, says) in [
            ("[web]\nw[1:99999999]\n", "not a range"),
            ("[web]\nw[1:\n", "without its ']'"),
            ("[web]\n-oProxyCommand=x\n", "begins with '-'"),
        ] {
            let inv = parse_inventory(bad, Path::new("hosts"));
            let e = match inv {
                Err(e) => e,
                Ok(inv) => inv
                    .select(None)
                    .unwrap()
                    .iter()
                    .find_map(|n| inv.host(n).err())
                    .unwrap(),
            };
            println!("{bad:?}: {e}");
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn a_group_after_the_file_name() {
        assert_eq!(
            split_inventory_arg("/nonexistent/hosts.yml:storage"),
            ("/nonexistent/hosts.yml", Some("storage"))
        );
        assert_eq!(split_inventory_arg("hosts.yml"), ("hosts.yml", None));
    }
}
