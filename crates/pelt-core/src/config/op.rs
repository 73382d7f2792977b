//! The comparison an assertion or an abort rule makes (`<`, `>=`, ...):
//! its own module, below both, so that a rule in a `RunConfig` does not
//! tie the configuration to the summaries assertions read.

/// How an assertion or an abort rule compares the measured value with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
}

impl Op {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
        }
    }
}
