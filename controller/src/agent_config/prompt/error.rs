//! Why a template did not parse or render: Go's own error text, or what srt-controller
//! refuses (its own module, so the parser and the evaluator need not name the module that
//! declares them).

/// A parse error, or a construct srt-controller refuses, at a line.
#[derive(Debug)]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
    pub unsupported: bool,
}

/// Why a template did not render: Go's own error text, or what srt-controller refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TemplateError {
    #[error("template: systemMessage:{line}: {msg}")]
    Parse { line: usize, msg: String },
    #[error("template: systemMessage:{line}:{col}: executing \"systemMessage\" at <{context}>: {msg}")]
    Exec { line: usize, col: usize, context: String, msg: String },
    #[error(
        "template: systemMessage:{line}: {what} is not supported by srt-controller \
         (Go's text/template has it, no kagent prompt uses it); write the template without it"
    )]
    Unsupported { line: usize, what: String },
    #[error("template: systemMessage: rendering stopped after {0}")]
    Limit(String),
}

impl From<ParseError> for TemplateError {
    fn from(e: ParseError) -> Self {
        if e.unsupported {
            TemplateError::Unsupported { line: e.line, what: e.msg }
        } else {
            TemplateError::Parse { line: e.line, msg: e.msg }
        }
    }
}
