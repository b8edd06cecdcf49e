//! Execution, following Go's `text/template/exec.go`: variable scopes, `if`/`range`/`with`,
//! field chains with the default `missingkey` option, argument checks against each function's
//! parameter types (`evalArg`, `validateType`), and `and`/`or` short-circuiting.

use std::collections::HashMap;
use std::rc::Rc;

use super::funcs::{self, CallError, Ctx, Imp, Ty};
use super::parse::{Arg, Cmd, Node, Num, Parsed, Pipe};
use super::value::{self, Value};
use super::{TemplateError, excerpt, limits, line_col};

/// How deep execution may nest (control bodies, parentheses and template calls together), to
/// keep the Rust stack bounded.
const NEST: usize = 250;

/// What a list of nodes asks its enclosing `range` to do.
enum Flow {
    /// Go on.
    Normal,
    /// `{{ break }}`
    Break,
    /// `{{ continue }}`
    Continue,
}

/// An execution error before its position is known, or with it.
type R<T> = Result<T, TemplateError>;

/// The state of one execution.
struct State<'a> {
    /// The template text (for positions).
    src: &'a str,
    /// The associated templates.
    defines: &'a HashMap<String, Rc<Vec<Node>>>,
    /// The variable stack.
    vars: Vec<(String, Value)>,
    /// The output.
    out: String,
    /// Steps taken.
    steps: u64,
    /// Nesting of template calls.
    depth: usize,
    /// Nesting of Rust calls.
    nest: usize,
    /// The functions' budget.
    ctx: Ctx,
    /// `missingkey=error`: a missing map key is an error (naming templates).
    missing_key_error: bool,
}

/// Executes a parsed template on `data`; `missing_key_error`: Go's `missingkey=error`.
pub(crate) fn execute(
    src: &str,
    parsed: &Parsed,
    data: Value,
    missing_key_error: bool,
) -> Result<String, TemplateError> {
    let mut state = State {
        src,
        defines: &parsed.defines,
        vars: vec![("$".to_owned(), data.clone())],
        out: String::new(),
        steps: 0,
        depth: 0,
        nest: 0,
        ctx: Ctx::default(),
        missing_key_error,
    };
    state.walk(&data, &parsed.root)?;
    Ok(state.out)
}

impl State<'_> {
    /// The execution error at byte `at`.
    fn err(&self, at: usize, message: impl Into<String>) -> TemplateError {
        let (line, column) = line_col(self.src, at);
        TemplateError::Exec {
            line,
            column,
            message: message.into(),
        }
    }

    /// Counts one step.
    fn step(&mut self, at: usize) -> R<()> {
        self.steps += 1;
        if self.steps > limits::STEPS {
            return Err(self.err(
                at,
                format!("the template takes more than {} steps", limits::STEPS),
            ));
        }
        Ok(())
    }

    /// Enters one nesting level.
    fn enter(&mut self, at: usize) -> R<()> {
        self.nest += 1;
        if self.nest > NEST {
            return Err(self.err(at, format!("execution nests deeper than {NEST} levels")));
        }
        Ok(())
    }

    /// Appends to the output within its limit.
    fn emit(&mut self, at: usize, text: &str) -> R<()> {
        if self.out.len() + text.len() > limits::OUTPUT_BYTES {
            return Err(self.err(
                at,
                format!("the output exceeds {} bytes", limits::OUTPUT_BYTES),
            ));
        }
        self.out.push_str(text);
        Ok(())
    }

    /// Walks a list of nodes.
    fn walk(&mut self, dot: &Value, nodes: &[Node]) -> R<Flow> {
        for node in nodes {
            match self.walk_node(dot, node)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    /// Walks one node.
    fn walk_node(&mut self, dot: &Value, node: &Node) -> R<Flow> {
        match node {
            Node::Text(text) => {
                self.step(0)?;
                self.emit(0, text)?;
            }
            Node::Action(pipe) => {
                let v = self.pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    let printed = value::to_v_string(&v)
                        .map_err(|_| self.err(pipe.pos, "the value nests too deeply to print"))?;
                    self.emit(pipe.pos, &printed)?;
                }
            }
            Node::If(pipe, then, otherwise) | Node::With(pipe, then, otherwise) => {
                self.enter(pipe.pos)?;
                let mark = self.vars.len();
                let v = self.pipeline(dot, pipe)?;
                let flow = if v.truth() {
                    if matches!(node, Node::With(..)) {
                        self.walk(&v, then)?
                    } else {
                        self.walk(dot, then)?
                    }
                } else {
                    self.walk(dot, otherwise)?
                };
                self.vars.truncate(mark);
                self.nest -= 1;
                return Ok(flow);
            }
            Node::Range(pipe, body, otherwise) => {
                self.enter(pipe.pos)?;
                let mark = self.vars.len();
                self.range(dot, pipe, body, otherwise)?;
                self.vars.truncate(mark);
                self.nest -= 1;
            }
            Node::Template(at, name, pipe) => {
                let Some(body) = self.defines.get(name).cloned() else {
                    return Err(
                        self.err(*at, format!("template \"{}\" not defined", excerpt(name)))
                    );
                };
                if self.depth >= limits::TEMPLATE_DEPTH {
                    return Err(self.err(
                        *at,
                        format!(
                            "exceeded maximum template depth ({})",
                            limits::TEMPLATE_DEPTH
                        ),
                    ));
                }
                let arg = match pipe {
                    Some(p) => self.pipeline(dot, p)?,
                    None => Value::Missing,
                };
                self.enter(*at)?;
                self.depth += 1;
                let saved = std::mem::replace(&mut self.vars, vec![("$".to_owned(), arg.clone())]);
                let result = self.walk(&arg, &body);
                self.vars = saved;
                self.depth -= 1;
                self.nest -= 1;
                result?;
            }
            Node::Break(_) => return Ok(Flow::Break),
            Node::Continue(_) => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    /// `{{ range }}`: lists, maps in key order, and integers (Go 1.22).
    fn range(&mut self, dot: &Value, pipe: &Pipe, body: &[Node], otherwise: &[Node]) -> R<()> {
        let v = self.pipeline(dot, pipe)?;
        let items: Vec<(Value, Value)> = match &v {
            Value::List(items) => items
                .0
                .iter()
                .enumerate()
                .map(|(i, e)| (Value::Int(i as i64), e.clone()))
                .collect(),
            Value::Map(map) => {
                let map = map
                    .try_borrow()
                    .map_err(|_| self.err(pipe.pos, "the map is in use"))?;
                map.0
                    .iter()
                    .map(|(k, e)| (Value::str(k.as_str()), e.clone()))
                    .collect()
            }
            Value::Int(n) => {
                if pipe.decl.len() > 1 {
                    return Err(self.err(
                        pipe.pos,
                        "can't use a second variable when ranging over an int",
                    ));
                }
                let n = usize::try_from(*n).unwrap_or(0);
                if n > limits::STEPS as usize {
                    return Err(self.err(
                        pipe.pos,
                        format!("the template takes more than {} steps", limits::STEPS),
                    ));
                }
                (0..n)
                    .map(|i| (Value::Int(i as i64), Value::Int(i as i64)))
                    .collect()
            }
            Value::Missing | Value::Nil => Vec::new(),
            // Go prints the value; a variable's value may be a secret, so its type is said.
            other => {
                return Err(self.err(
                    pipe.pos,
                    format!(
                        "range can't iterate over a value of type {}",
                        other.type_name()
                    ),
                ));
            }
        };
        if items.is_empty() {
            self.walk(dot, otherwise)?;
            return Ok(());
        }
        let top = self.vars.len();
        for (index, elem) in items {
            self.step(pipe.pos)?;
            match pipe.decl.as_slice() {
                [] => {}
                [e] => self.set_decl(top, pipe, 0, e, elem.clone())?,
                [i, e] => {
                    self.set_decl(top, pipe, 0, i, index)?;
                    self.set_decl(top, pipe, 1, e, elem.clone())?;
                }
                _ => return Err(self.err(pipe.pos, "too many declarations in range")),
            }
            let mark = self.vars.len();
            let flow = self.walk(&elem, body)?;
            self.vars.truncate(mark);
            if matches!(flow, Flow::Break) {
                break;
            }
        }
        Ok(())
    }

    /// Sets a range variable: the `n`th declared one (pushed by the pipeline below `top`) or,
    /// for `=`, the existing variable.
    fn set_decl(&mut self, top: usize, pipe: &Pipe, n: usize, name: &str, v: Value) -> R<()> {
        if pipe.assign {
            return self.set_var(pipe.pos, name, v);
        }
        let slot = top + n - pipe.decl.len();
        match self.vars.get_mut(slot) {
            Some(var) => var.1 = v,
            None => {
                return Err(self.err(pipe.pos, "internal error: range variable not on the stack"));
            }
        }
        Ok(())
    }

    /// `$x = value`.
    fn set_var(&mut self, at: usize, name: &str, v: Value) -> R<()> {
        match self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            Some(var) => {
                var.1 = v;
                Ok(())
            }
            None => Err(self.err(at, format!("undefined variable: {}", excerpt(name)))),
        }
    }

    /// A variable's value.
    fn var(&self, at: usize, name: &str) -> R<Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| self.err(at, format!("undefined variable: {}", excerpt(name))))
    }

    /// Evaluates a pipeline and sets its declared variables.
    fn pipeline(&mut self, dot: &Value, pipe: &Pipe) -> R<Value> {
        self.enter(pipe.pos)?;
        let mut v: Option<Value> = None;
        for cmd in &pipe.cmds {
            // Go digs into an `interface{}` result: a nil one becomes the invalid value, which
            // prints `<no value>` (a JSON null, `index` of a missing key, `coalesce` of nothing).
            v = Some(match self.command(dot, cmd, v)? {
                Value::Nil => Value::Missing,
                other => other,
            });
        }
        let v = v.unwrap_or(Value::Missing);
        for name in &pipe.decl {
            if pipe.assign {
                self.set_var(pipe.pos, name, v.clone())?;
            } else {
                self.vars.push((name.clone(), v.clone()));
            }
        }
        self.nest -= 1;
        Ok(v)
    }

    /// Go's `notAFunction`.
    fn not_a_function(&self, cmd: &Cmd, fin: &Option<Value>, what: &str) -> R<()> {
        if cmd.args.len() > 1 || fin.is_some() {
            return Err(self.err(
                cmd.pos,
                format!("can't give argument to non-function {what}"),
            ));
        }
        Ok(())
    }

    /// Evaluates one command, `fin` being the previous command's value.
    fn command(&mut self, dot: &Value, cmd: &Cmd, fin: Option<Value>) -> R<Value> {
        self.step(cmd.pos)?;
        let Some(first) = cmd.args.first() else {
            return Err(self.err(cmd.pos, "empty command"));
        };
        let has_args = cmd.args.len() > 1 || fin.is_some();
        match first {
            Arg::Field(at, names) => self.field_chain(*at, dot.clone(), names, has_args),
            Arg::Chain(at, base, names) => {
                let base = self.arg_value(dot, base)?;
                self.field_chain(*at, base, names, has_args)
            }
            Arg::Var(at, name, names) => {
                let v = self.var(*at, name)?;
                if names.is_empty() {
                    self.not_a_function(cmd, &fin, name)?;
                    return Ok(v);
                }
                self.field_chain(*at, v, names, has_args)
            }
            Arg::Func(at, name) => self.call(dot, *at, name, &cmd.args[1..], fin),
            Arg::Pipe(at, pipe) => {
                self.not_a_function(cmd, &fin, "(pipeline)")?;
                let _ = at;
                self.pipeline(dot, pipe)
            }
            Arg::Dot(_) => {
                self.not_a_function(cmd, &fin, ".")?;
                Ok(dot.clone())
            }
            Arg::Nil(at) => Err(self.err(*at, "nil is not a command")),
            Arg::Bool(b) => {
                self.not_a_function(cmd, &fin, if *b { "true" } else { "false" })?;
                Ok(Value::Bool(*b))
            }
            Arg::Number(at, num) => {
                self.not_a_function(cmd, &fin, &num.text)?;
                self.ideal(*at, num)
            }
            Arg::Str(s) => {
                self.not_a_function(cmd, &fin, &format!("{:?}", excerpt(s)))?;
                Ok(Value::Str(s.clone()))
            }
        }
    }

    /// Go's `idealConstant`: an untyped number as `int` or `float64`.
    fn ideal(&self, at: usize, num: &Num) -> R<Value> {
        if num.is_float_literal()
            && let Some(f) = num.float
        {
            return Ok(Value::Float(f));
        }
        match num.int {
            Some(i) => Ok(Value::Int(i)),
            None => Err(self.err(at, format!("{} overflows int", excerpt(&num.text)))),
        }
    }

    /// `.a.b.c` from `receiver`; the last field gets the arguments, which a map refuses.
    fn field_chain(
        &mut self,
        at: usize,
        receiver: Value,
        names: &[String],
        has_args: bool,
    ) -> R<Value> {
        let mut v = receiver;
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            v = self.field(at, v, name, last && has_args)?;
        }
        Ok(v)
    }

    /// Go's `evalField` on a map (with `missingkey=default`, or `missingkey=error`) or another
    /// value.
    fn field(&self, at: usize, receiver: Value, name: &str, has_args: bool) -> R<Value> {
        match receiver {
            Value::Missing => Ok(Value::Missing),
            Value::Nil => Err(self.err(
                at,
                format!("nil pointer evaluating interface {{}}.{}", excerpt(name)),
            )),
            Value::Map(map) => {
                if has_args {
                    return Err(self.err(
                        at,
                        format!("{} is not a method but has arguments", excerpt(name)),
                    ));
                }
                let map = map
                    .try_borrow()
                    .map_err(|_| self.err(at, "the map is in use"))?;
                match map.0.get(name) {
                    Some(v) => Ok(v.clone()),
                    None if self.missing_key_error => {
                        Err(self.err(at, format!("map has no entry for key {:?}", excerpt(name))))
                    }
                    None => Ok(Value::Missing),
                }
            }
            other => Err(self.err(
                at,
                format!(
                    "can't evaluate field {} in type {}",
                    excerpt(name),
                    other.type_name()
                ),
            )),
        }
    }

    /// The value of an operand used as an argument of type `interface{}` (or a chain's base).
    fn arg_value(&mut self, dot: &Value, arg: &Arg) -> R<Value> {
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Value::Nil),
            Arg::Bool(b) => Ok(Value::Bool(*b)),
            Arg::Number(at, num) => self.ideal(*at, num),
            Arg::Str(s) => Ok(Value::Str(s.clone())),
            Arg::Field(at, names) => self.field_chain(*at, dot.clone(), names, false),
            Arg::Var(at, name, names) => {
                let v = self.var(*at, name)?;
                self.field_chain(*at, v, names, false)
            }
            Arg::Func(at, name) => self.call(dot, *at, name, &[], None),
            Arg::Pipe(_, pipe) => self.pipeline(dot, pipe),
            Arg::Chain(at, base, names) => {
                if matches!(**base, Arg::Nil(_)) {
                    return Err(self.err(*at, "indirection through explicit nil"));
                }
                let base = self.arg_value(dot, base)?;
                self.field_chain(*at, base, names, false)
            }
        }
    }

    /// Go's `evalArg` + `validateType`: an operand as a parameter of type `ty`.
    fn typed_arg(&mut self, dot: &Value, arg: &Arg, ty: Ty) -> R<Value> {
        let at = arg_pos(arg);
        // Literals are typed by the parameter.
        match (arg, ty) {
            (Arg::Number(_, num), Ty::Int) => {
                return num.int.map(Value::Int).ok_or_else(|| {
                    self.err(
                        at,
                        format!("expected integer; found {}", excerpt(&num.text)),
                    )
                });
            }
            (Arg::Number(_, num), Ty::Float) => {
                return num.float.map(Value::Float).ok_or_else(|| {
                    self.err(at, format!("expected float; found {}", excerpt(&num.text)))
                });
            }
            (Arg::Nil(_), Ty::Str | Ty::Int | Ty::Bool | Ty::Float) => {
                return Err(self.err(at, format!("cannot assign nil to {}", ty.go_name())));
            }
            (Arg::Nil(_), Ty::Map) => return Ok(Value::Nil),
            (
                Arg::Number(..) | Arg::Bool(_) | Arg::Str(_),
                Ty::Str | Ty::Int | Ty::Bool | Ty::Float | Ty::Map,
            ) => {
                let literal_ok =
                    matches!((arg, ty), (Arg::Str(_), Ty::Str) | (Arg::Bool(_), Ty::Bool));
                if !literal_ok {
                    let expected = match ty {
                        Ty::Str => "string".to_owned(),
                        Ty::Int => "integer".to_owned(),
                        Ty::Bool => "bool".to_owned(),
                        Ty::Float => "float".to_owned(),
                        _ => ty.go_name().to_owned(),
                    };
                    let found = match arg {
                        Arg::Number(_, n) => n.text.clone(),
                        Arg::Bool(b) => b.to_string(),
                        Arg::Str(s) => format!("{:?}", excerpt(s)),
                        _ => String::new(),
                    };
                    if matches!(ty, Ty::Map) {
                        return Err(self.err(
                            at,
                            format!("can't handle {found} for arg of type {expected}"),
                        ));
                    }
                    return Err(self.err(at, format!("expected {expected}; found {found}")));
                }
            }
            _ => {}
        }
        let v = self.arg_value(dot, arg)?;
        self.validate(at, v, ty)
    }

    /// Go's `validateType` of an evaluated value against a parameter type.
    fn validate(&self, at: usize, v: Value, ty: Ty) -> R<Value> {
        let ok = match (&v, ty) {
            (_, Ty::Val) => return Ok(v),
            (_, Ty::Any) => return Ok(v.into_interface()),
            (Value::Missing, Ty::Map) => return Ok(Value::Nil),
            (Value::Missing, _) => {
                return Err(self.err(at, format!("invalid value; expected {}", ty.go_name())));
            }
            (Value::Str(_), Ty::Str)
            | (Value::Int(_), Ty::Int)
            | (Value::Bool(_), Ty::Bool)
            | (Value::Float(_), Ty::Float)
            | (Value::Map(_), Ty::Map) => true,
            _ => false,
        };
        if ok {
            Ok(v)
        } else {
            Err(self.err(
                at,
                format!(
                    "wrong type for value; expected {}; got {}",
                    ty.go_name(),
                    v.type_name()
                ),
            ))
        }
    }

    /// Calls function `name` with the operands `args` and the piped value `fin`.
    fn call(
        &mut self,
        dot: &Value,
        at: usize,
        name: &str,
        args: &[Arg],
        fin: Option<Value>,
    ) -> R<Value> {
        let Some(func) = funcs::lookup(name) else {
            return Err(self.err(at, format!("function \"{}\" not defined", excerpt(name))));
        };
        let given = args.len() + usize::from(fin.is_some());
        let fixed = func.params.len();
        if func.variadic.is_some() {
            if given < fixed {
                return Err(self.err(
                    at,
                    format!("wrong number of args for {name}: want at least {fixed} got {given}"),
                ));
            }
        } else if given != fixed {
            return Err(self.err(
                at,
                format!("wrong number of args for {name}: want {fixed} got {given}"),
            ));
        }
        let ty_of = |i: usize| {
            func.params
                .get(i)
                .copied()
                .or(func.variadic)
                .unwrap_or(Ty::Any)
        };
        match func.imp {
            Imp::Unsupported => {
                return Err(TemplateError::Unsupported {
                    name: name.to_owned(),
                });
            }
            Imp::AndOr(is_or) => {
                let mut v = Value::Missing;
                for arg in args {
                    v = self.typed_arg(dot, arg, Ty::Val)?;
                    if v.truth() == is_or {
                        return Ok(v);
                    }
                }
                if let Some(f) = fin {
                    v = f;
                }
                return Ok(v);
            }
            Imp::Native(_) => {}
        }
        let mut values = Vec::with_capacity(given);
        for (i, arg) in args.iter().enumerate() {
            values.push(self.typed_arg(dot, arg, ty_of(i))?);
        }
        if let Some(f) = fin {
            values.push(self.validate(at, f, ty_of(args.len()))?);
        }
        let Imp::Native(imp) = func.imp else {
            return Err(self.err(at, "internal error: no implementation"));
        };
        match imp(&mut self.ctx, values) {
            Ok(v) => Ok(v),
            Err(CallError::Failed(msg)) => {
                Err(self.err(at, format!("error calling {name}: {msg}")))
            }
            Err(CallError::Plain(msg)) => Err(self.err(at, msg)),
            Err(CallError::Unsupported) => Err(TemplateError::Unsupported {
                name: name.to_owned(),
            }),
        }
    }
}

/// The byte offset of an operand (0 for literals without one: the action's is used instead).
fn arg_pos(arg: &Arg) -> usize {
    match arg {
        Arg::Dot(p) | Arg::Nil(p) | Arg::Number(p, _) | Arg::Field(p, _) | Arg::Var(p, ..) => *p,
        Arg::Func(p, _) | Arg::Pipe(p, _) | Arg::Chain(p, ..) => *p,
        Arg::Bool(_) | Arg::Str(_) => 0,
    }
}
