//! A lesson's claims and choices: small expressions over the figures a lesson measured, such
//! as `qd32.iops >= 3 * qd1.iops` or `abs(qd32.iops * qd32.lat_mean_us / 1e6 - 32) <= 4.8`.
//!
//! Every number is an f64: `reads == 0` means what a teacher means whatever the figure's
//! origin, and `a / b` never truncates. (The evalexpr crate was tried first: it keeps integers
//! and floats apart, so `x == 0` is false for a float 0.0 and `7 / 2` is 3, each a claim that
//! would silently say the wrong thing; a 200-line evaluator of our own avoids both.)
//!
//! Grammar (lowest precedence first): `or`, `and`, `not`, comparisons (`< <= > >= == !=`),
//! `+ -`, `* /`, unary `-`, then numbers (`3`, `1.5`, `1e6`), names (`test.figure`), the
//! functions `abs(x)`, `min(x, y)`, `max(x, y)`, and parentheses.

use std::fmt;

/// A parsed expression: a comparison or a logical combination of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub text: String,
    node: Node,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Num(f64),
    Var(String),
    Neg(Box<Node>),
    Bin(Box<Node>, char, Box<Node>),
    Call(String, Vec<Node>),
    Cmp(Box<Node>, Cmp, Box<Node>),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(String),
}

fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_ascii_digit()
            || (ch == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < c.len()
                && (c[i].is_ascii_alphanumeric()
                    || c[i] == '.'
                    || (matches!(c[i], '+' | '-') && matches!(c[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let t: String = c[start..i].iter().collect();
            let v = t
                .parse::<f64>()
                .map_err(|_| format!("'{t}' is not a number"))?;
            out.push(Tok::Num(v));
        } else if ch.is_ascii_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || matches!(c[i], '_' | '.')) {
                i += 1;
            }
            out.push(Tok::Name(c[start..i].iter().collect()));
        } else {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            if ["<=", ">=", "==", "!="].contains(&two.as_str()) {
                out.push(Tok::Op(two));
                i += 2;
            } else if "+-*/<>(),".contains(ch) {
                out.push(Tok::Op(ch.to_string()));
                i += 1;
            } else {
                return Err(format!("unexpected '{ch}'"));
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn eat_op(&mut self, op: &str) -> bool {
        if self.peek() == Some(&Tok::Op(op.into())) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.peek() == Some(&Tok::Name(w.into())) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Result<Node, String> {
        let mut l = self.and()?;
        while self.eat_word("or") {
            l = Node::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Node, String> {
        let mut l = self.not()?;
        while self.eat_word("and") {
            l = Node::And(Box::new(l), Box::new(self.not()?));
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Node, String> {
        if self.eat_word("not") {
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Node, String> {
        if self.eat_op("(") {
            // A parenthesised condition, or a sum that a comparison follows.
            let save = self.at;
            if let Ok(n) = self.or()
                && is_bool(&n)
                && self.eat_op(")")
            {
                return Ok(n);
            }
            self.at = save - 1;
        }
        let l = self.sum()?;
        let ops = [
            ("<=", Cmp::Le),
            (">=", Cmp::Ge),
            ("==", Cmp::Eq),
            ("!=", Cmp::Ne),
            ("<", Cmp::Lt),
            (">", Cmp::Gt),
        ];
        for (t, c) in ops {
            if self.eat_op(t) {
                return Ok(Node::Cmp(Box::new(l), c, Box::new(self.sum()?)));
            }
        }
        Err("a claim compares two figures (<, <=, >, >=, == or !=)".into())
    }
    fn sum(&mut self) -> Result<Node, String> {
        let mut l = self.prod()?;
        loop {
            let op = if self.eat_op("+") {
                '+'
            } else if self.eat_op("-") {
                '-'
            } else {
                return Ok(l);
            };
            l = Node::Bin(Box::new(l), op, Box::new(self.prod()?));
        }
    }
    fn prod(&mut self) -> Result<Node, String> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat_op("*") {
                '*'
            } else if self.eat_op("/") {
                '/'
            } else {
                return Ok(l);
            };
            l = Node::Bin(Box::new(l), op, Box::new(self.unary()?));
        }
    }
    fn unary(&mut self) -> Result<Node, String> {
        if self.eat_op("-") {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Node, String> {
        match self.toks.get(self.at).cloned() {
            Some(Tok::Num(v)) => {
                self.at += 1;
                Ok(Node::Num(v))
            }
            Some(Tok::Op(o)) if o == "(" => {
                self.at += 1;
                let n = self.sum()?;
                if !self.eat_op(")") {
                    return Err("a '(' is not closed".into());
                }
                Ok(n)
            }
            Some(Tok::Name(n)) if ["and", "or", "not"].contains(&n.as_str()) => {
                Err(format!("'{n}' where a figure was expected"))
            }
            Some(Tok::Name(n)) => {
                self.at += 1;
                if self.eat_op("(") {
                    return self.call(n);
                }
                Ok(Node::Var(n))
            }
            Some(Tok::Op(o)) => Err(format!("'{o}' where a figure was expected")),
            None => Err("the expression ends where a figure was expected".into()),
        }
    }
    fn call(&mut self, name: String) -> Result<Node, String> {
        let mut args = vec![self.sum()?];
        while self.eat_op(",") {
            args.push(self.sum()?);
        }
        if !self.eat_op(")") {
            return Err(format!("{name}( is not closed"));
        }
        let want = match name.as_str() {
            "abs" => 1,
            "min" | "max" => 2,
            _ => return Err(format!("no function '{name}': use abs, min or max")),
        };
        if args.len() != want {
            return Err(format!("{name} takes {want} argument(s)"));
        }
        Ok(Node::Call(name, args))
    }
}

fn is_bool(n: &Node) -> bool {
    matches!(
        n,
        Node::Cmp(..) | Node::Not(_) | Node::And(..) | Node::Or(..)
    )
}

impl Expr {
    /// Parses a condition; the error says what is wrong in the user's words.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let mut p = Parser {
            toks: tokens(text)?,
            at: 0,
        };
        let node = p.or()?;
        if let Some(t) = p.peek() {
            let t = match t {
                Tok::Num(v) => v.to_string(),
                Tok::Name(n) | Tok::Op(n) => n.clone(),
            };
            return Err(format!("unexpected '{t}' after a complete condition"));
        }
        Ok(Expr {
            text: text.to_string(),
            node,
        })
    }

    /// The names it reads, in order of first use.
    pub fn variables(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            match n {
                Node::Num(_) => {}
                Node::Var(v) => {
                    if !out.contains(v) {
                        out.push(v.clone())
                    }
                }
                Node::Neg(a) | Node::Not(a) => walk(a, out),
                Node::Bin(a, _, b) | Node::Cmp(a, _, b) | Node::And(a, b) | Node::Or(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = Vec::new();
        walk(&self.node, &mut out);
        out
    }

    /// Whether it holds for the figures `get` gives; an error names a figure it lacks.
    pub fn holds(&self, get: &dyn Fn(&str) -> Option<f64>) -> Result<bool, String> {
        truth(&self.node, get)
    }
}

fn value(n: &Node, get: &dyn Fn(&str) -> Option<f64>) -> Result<f64, String> {
    Ok(match n {
        Node::Num(v) => *v,
        Node::Var(v) => get(v).ok_or_else(|| format!("no figure {v} in this run"))?,
        Node::Neg(a) => -value(a, get)?,
        Node::Bin(a, op, b) => {
            let (a, b) = (value(a, get)?, value(b, get)?);
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                _ => a / b,
            }
        }
        Node::Call(f, args) => {
            let a = value(&args[0], get)?;
            match f.as_str() {
                "abs" => a.abs(),
                "min" => a.min(value(&args[1], get)?),
                _ => a.max(value(&args[1], get)?),
            }
        }
        _ => return Err("a condition where a figure was expected".into()),
    })
}

fn truth(n: &Node, get: &dyn Fn(&str) -> Option<f64>) -> Result<bool, String> {
    Ok(match n {
        Node::Cmp(a, c, b) => {
            let (a, b) = (value(a, get)?, value(b, get)?);
            match c {
                Cmp::Lt => a < b,
                Cmp::Le => a <= b,
                Cmp::Gt => a > b,
                Cmp::Ge => a >= b,
                Cmp::Eq => a == b,
                Cmp::Ne => a != b,
            }
        }
        Node::Not(a) => !truth(a, get)?,
        Node::And(a, b) => truth(a, get)? && truth(b, get)?,
        Node::Or(a, b) => truth(a, get)? || truth(b, get)?,
        _ => return Err("a figure where a condition was expected".into()),
    })
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(s: &str, vars: &[(&str, f64)]) -> Result<bool, String> {
        let get = |n: &str| vars.iter().find(|(k, _)| *k == n).map(|x| x.1);
        Expr::parse(s)?.holds(&get)
    }

    #[test]
    fn claims_evaluate_over_floats() {
        let v = [
            ("qd1.iops", 1000.0),
            ("qd32.iops", 9000.0),
            ("w.reads", 0.0),
        ];
        assert_eq!(eval("qd32.iops >= 3 * qd1.iops", &v), Ok(true));
        assert_eq!(eval("qd32.iops >= 10 * qd1.iops", &v), Ok(false));
        assert_eq!(eval("w.reads == 0", &v), Ok(true), "0.0 == 0");
        assert_eq!(eval("7 / 2 == 3.5", &v), Ok(true), "no integer division");
        assert_eq!(
            eval(
                "abs(qd32.iops / qd1.iops - 9) <= 0.5 and not w.reads > 0",
                &v
            ),
            Ok(true)
        );
        assert_eq!(
            eval("(w.reads > 0 or qd1.iops > 1) and 1e3 == qd1.iops", &v),
            Ok(true)
        );
        assert_eq!(eval("-(qd1.iops) < min(2, max(1, 3))", &v), Ok(true));
        assert_eq!(eval("(qd1.iops + 1) * 2 > 2000", &v), Ok(true));
        let e = eval("x.iops > 1", &v).unwrap_err();
        assert!(e.contains("x.iops"), "{e}");
    }

    #[test]
    fn bad_claims_are_refused_with_the_reason() {
        for (s, want) in [
            ("qd1.iops", "compares"),
            ("qd1.iops >", "ends"),
            ("qd1.iops > 1 1", "unexpected '1'"),
            ("sqrt(2) > 1", "no function 'sqrt'"),
            ("abs(1, 2) > 1", "takes 1"),
            ("a > 1 $", "unexpected '$'"),
            ("(a > 1", "not closed"),
            ("1.2.3 > 1", "not a number"),
        ] {
            let e = Expr::parse(s).unwrap_err();
            println!("{s}: {e}");
            assert!(e.contains(want), "{s}: {e}");
        }
    }

    #[test]
    fn variables_are_listed_once_in_order() {
        let e = Expr::parse("b.x > a.y and abs(b.x - c) < 2").unwrap();
        assert_eq!(e.variables(), ["b.x", "a.y", "c"]);
        assert!(Expr::parse("1 > 0").unwrap().variables().is_empty());
    }
}
