//! What an import reports: an error naming a JSON path, or a note of a close form.

/// Why a CRD cannot be imported: the JSON path of the node and the problem.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub path: String,
    pub message: String,
}

impl Error {
    pub fn new(path: &str, message: impl Into<String>) -> Error {
        Error {
            path: path.to_string(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Something of the CRD written in its closest form, not exactly: where, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub path: String,
    pub message: String,
}

impl Note {
    pub fn new(path: &str, message: impl Into<String>) -> Note {
        Note {
            path: path.to_string(),
            message: message.into(),
        }
    }
}
