//! An option row: its name, its value, its help, and what it does to what the command line
//! gathers (`T`), its value parsed there, once. Each view's module holds its rows; the
//! command line's own options are rows of the same kind (in `cli/`), and so are
//! spddump's. The parser and `/help` are both made from the rows.

use std::ffi::OsStr;

/// Where an option is listed in the help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// What to print.
    Sections,
    /// How to print it.
    Output,
}

/// What an option takes after its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Takes {
    /// Nothing: a flag.
    Nothing,
    /// A value after a colon, or nothing (`/callgraph`, `/callgraph:NAME`).
    Maybe,
    /// A value.
    Value,
    /// A value; or, written `/name` alone, nothing, which its program says the meaning of
    /// (`/match` alone checks what `/symbols` finds).
    ValueOrAlone,
}

/// What an option does to what the command line gathers.
pub(crate) enum Set<T> {
    /// A flag.
    Flag(fn(&mut T)),
    /// A value (each item of a list): parsed and stored, or why it is not good.
    Value(fn(&mut T, &OsStr) -> Result<(), String>),
    /// A flag that may take a value after a colon (`/callgraph`, `/callgraph:NAME`).
    Optional(fn(&mut T, Option<&OsStr>) -> Result<(), String>),
}

impl<T> Clone for Set<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Set<T> {}

/// One option: what it is ([`About`]) and what it does.
pub(crate) struct Opt<T> {
    /// Its name, value and help.
    pub about: About,
    /// What it does.
    pub set: Set<T>,
}

impl<T> std::ops::Deref for Opt<T> {
    type Target = About;

    fn deref(&self) -> &About {
        &self.about
    }
}

/// What an option is, as the parser and the help see it.
#[derive(Clone, Copy)]
pub(crate) struct About {
    /// Its name: `top` for `/top`.
    pub name: &'static str,
    /// The name of its value (`N` for `/top:N`), if it takes one. A value named `FILE` or
    /// `FILES` may not be empty.
    pub value: Option<&'static str>,
    /// Whether the value is a comma-separated list that accumulates over repetitions.
    pub list: bool,
    /// How the help shows it, when not as `/name` or `/name:VALUE`.
    pub shown: Option<&'static str>,
    /// Where the help lists it.
    pub group: Group,
    /// The help text; a newline continues it on the next line.
    pub help: &'static str,
    /// The value when the option is not given, as the help shows it.
    pub default: Option<fn() -> String>,
    /// What it takes after its name.
    pub takes: Takes,
}

impl<T> Opt<T> {
    /// A flag, listed with what to print.
    pub(crate) const fn flag(name: &'static str, help: &'static str, set: fn(&mut T)) -> Self {
        Opt {
            about: About::new(name, None, None, help, Takes::Nothing),
            set: Set::Flag(set),
        }
    }

    /// An option that takes a value, named `value`, listed with what to print.
    pub(crate) const fn valued(
        name: &'static str,
        value: &'static str,
        help: &'static str,
        set: fn(&mut T, &OsStr) -> Result<(), String>,
    ) -> Self {
        Opt {
            about: About::new(name, Some(value), None, help, Takes::Value),
            set: Set::Value(set),
        }
    }

    /// A flag that may take a value after a colon, shown in the help as `shown`.
    pub(crate) const fn optional(
        name: &'static str,
        shown: &'static str,
        help: &'static str,
        set: fn(&mut T, Option<&OsStr>) -> Result<(), String>,
    ) -> Self {
        Opt {
            about: About::new(name, None, Some(shown), help, Takes::Maybe),
            set: Set::Optional(set),
        }
    }

    /// The same option, listed with how to print.
    pub(crate) const fn output(mut self) -> Self {
        self.about.group = Group::Output;
        self
    }

    /// The same option, its value a comma-separated list that accumulates.
    pub(crate) const fn list(mut self) -> Self {
        self.about.list = true;
        self
    }

    /// The same option, also given alone, without its value ([`Takes::ValueOrAlone`]).
    pub(crate) const fn or_alone(mut self) -> Self {
        self.about.takes = Takes::ValueOrAlone;
        self
    }

    /// The same option, its value when it is not given shown in the help.
    pub(crate) const fn default(mut self, default: fn() -> String) -> Self {
        self.about.default = Some(default);
        self
    }

    /// The same option, shown in the help as `shown`.
    pub(crate) const fn shown(mut self, shown: &'static str) -> Self {
        self.about.shown = Some(shown);
        self
    }
}

impl About {
    const fn new(
        name: &'static str,
        value: Option<&'static str>,
        shown: Option<&'static str>,
        help: &'static str,
        takes: Takes,
    ) -> Self {
        About {
            name,
            value,
            list: false,
            shown,
            group: Group::Sections,
            help,
            default: None,
            takes,
        }
    }

    /// How the help shows it: `/name`, `/name:VALUE`, or its own spelling.
    pub(crate) fn label(&self) -> String {
        match (self.shown, self.value) {
            (Some(shown), _) => shown.to_owned(),
            (None, Some(value)) => format!("/{}:{value}", self.name),
            (None, None) => format!("/{}", self.name),
        }
    }
}

/// A value's text, for the values that are not file names.
pub(crate) fn text(value: &OsStr) -> String {
    value.to_string_lossy().into_owned()
}
