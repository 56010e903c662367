//! The byte order of lists of names joined by `;` (a folded line's text), without joining
//! them.
//!
//! Folded lines are sorted by their text, but a line's text is never held: a profile of deep,
//! distinct stacks makes long lines, and many. [`joined_cmp`] compares two lists of names as
//! their text, byte by byte. [`Pieces`] does the same in a few integer comparisons per name,
//! when no name is empty or holds a `;`: the text is then cut into pieces in one way only, each a name
//! followed by `;` (a name with more after it) or by the line's end (the last), and two lines
//! compare as their pieces do, one after another.
//!
//! ```text
//!   line      a;b;ab          a;b0
//!   pieces    "a;" "b;" "ab"  "a;" "b0"       "b;" < "b0": ';' (0x3b) is above '0' (0x30)
//! ```
//!
//! Why: where two lines first differ, both are in a piece at the same offset (the pieces
//! before are equal). If the two pieces' names differ at a byte, that byte decides. If one name
//! is the other's start, the shorter one's `;` or end is compared with a byte of the longer
//! name, which is not `;` (no name holds one), so it decides: `;` as its byte value, the end
//! below every byte. If the names are equal, one piece ends its line and the other goes on: the
//! shorter line is first. In every case the first differing pieces decide, as the pieces
//! compare. So each piece is given its place among all the pieces there can be, and a line is
//! compared as the list of its pieces' places.

use std::cmp::Ordering;
use std::iter;

use rustc_hash::FxHashMap;

/// Compares two lists of names as the strings they make joined by `;`, without making them:
/// equal names are skipped whole, and the rest compared byte by byte.
pub(crate) fn joined_cmp<'s>(
    mut a: impl Iterator<Item = &'s str>,
    mut b: impl Iterator<Item = &'s str>,
) -> Ordering {
    let mut skipped = false;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => skipped = true,
            (x, y) => return rest(skipped, x, a).cmp(rest(skipped, y, b)),
        }
    }
}

/// The bytes of the names `first` and `rest` joined by `;`; after names `skipped`, with
/// the `;` before them, if there are any.
fn rest<'s>(
    skipped: bool,
    first: Option<&'s str>,
    rest: impl Iterator<Item = &'s str>,
) -> impl Iterator<Item = u8> {
    let separator = (skipped && first.is_some()).then_some(b';');
    separator
        .into_iter()
        .chain(joined_bytes(first.into_iter().chain(rest)))
}

/// The bytes of `parts` joined by `;`.
fn joined_bytes<'s>(parts: impl Iterator<Item = &'s str>) -> impl Iterator<Item = u8> {
    parts
        .enumerate()
        .flat_map(|(i, p)| (i > 0).then_some(b';').into_iter().chain(p.bytes()))
}

/// The two places of a name among the pieces of the lines: followed by `;`, and ending its
/// line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Places {
    followed: u32,
    last: u32,
}

/// Every name's [`Places`] among the pieces of the lines made of a set of names.
pub(crate) struct Pieces<'s> {
    places: FxHashMap<&'s str, Places>,
}

impl<'s> Pieces<'s> {
    /// The places of `names`' pieces; `None` when a name holds a `;` or is empty, which makes
    /// the pieces of a line more than one cut of its text (`a;b` is also the one name `a;b`,
    /// the empty line also one empty name).
    pub fn of(names: impl Iterator<Item = &'s str>) -> Option<Self> {
        let mut places: FxHashMap<&'s str, Places> = FxHashMap::default();
        for name in names {
            if name.is_empty() || name.contains(';') {
                return None;
            }
            places.entry(name).or_default();
        }
        let mut pieces: Vec<(&str, bool)> = places
            .keys()
            .flat_map(|&name| [(name, false), (name, true)])
            .collect();
        pieces.sort_unstable_by(|&(x, xs), &(y, ys)| piece_cmp(x, xs, y, ys));
        for (place, &(name, followed)) in pieces.iter().enumerate() {
            // Two pieces per name, and fewer names than 2^31 fit in memory.
            let place = u32::try_from(place).expect("fewer than 2^32 pieces");
            let places = places.get_mut(name).expect("every piece's name is placed");
            match followed {
                true => places.followed = place,
                false => places.last = place,
            }
        }
        Some(Pieces { places })
    }

    /// The places of `name`, one of the names the pieces were made of.
    pub fn places(&self, name: &str) -> Places {
        self.places[name]
    }
}

/// The places of the pieces of a line of `len` names, whose places are `names`: each name
/// followed by `;`, the last ending the line. Two lines compare as these do.
pub(crate) fn line(names: impl Iterator<Item = Places>, len: usize) -> impl Iterator<Item = u32> {
    names.enumerate().map(move |(i, p)| match i + 1 == len {
        true => p.last,
        false => p.followed,
    })
}

/// Compares the pieces `x` and `y`, each followed by `;` or ending its line (below every byte).
fn piece_cmp(x: &str, x_followed: bool, y: &str, y_followed: bool) -> Ordering {
    piece(x, x_followed).cmp(piece(y, y_followed))
}

/// The piece `name`, followed by `;` or ending its line, as a byte value + 1 per byte and
/// [`END`] for the end.
fn piece(name: &str, followed: bool) -> impl Iterator<Item = u16> + '_ {
    let after = if followed { SEMICOLON } else { END };
    name.bytes()
        .map(|b| u16::from(b) + 1)
        .chain(iter::once(after))
}

/// In a [`piece`], the end of a line: below every byte.
const END: u16 = 0;

/// In a [`piece`], the `;` after a name.
const SEMICOLON: u16 = b';' as u16 + 1;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list of up to three of `names`, and the empty one.
    fn lists<'s>(names: &[&'s str]) -> Vec<Vec<&'s str>> {
        let mut lists: Vec<Vec<&str>> = vec![vec![]];
        for &x in names {
            lists.push(vec![x]);
            for &y in names {
                lists.push(vec![x, y]);
                lists.extend(names.iter().map(|&z| vec![x, y, z]));
            }
        }
        lists
    }

    #[test]
    fn lists_of_names_compare_as_the_lines_they_make() {
        // Names that are prefixes of others, followed by bytes below, at and above `;`.
        let names = ["a", "a!", "a;", "a;b", "a<", "ab", "b", ""];
        let lists = lists(&names);
        for a in &lists {
            for b in &lists {
                let want = a.join(";").cmp(&b.join(";"));
                let got = joined_cmp(a.iter().copied(), b.iter().copied());
                assert_eq!(got, want, "{a:?} against {b:?}");
            }
        }
    }

    #[test]
    fn lines_compare_as_the_places_of_their_pieces() {
        // Names that are prefixes of others, followed by bytes below and above `;` (`0` and
        // `:` below, `<` and `b` above), and bytes past ASCII.
        let names = ["a", "a0", "a:", "a<", "ab", "b", " ", "é", "a\u{7f}"];
        let pieces = Pieces::of(names.iter().copied()).expect("no name is empty or holds a `;`");
        let places = |l: &[&str]| -> Vec<u32> {
            line(l.iter().map(|n| pieces.places(n)), l.len()).collect()
        };
        let lists = lists(&names);
        for a in &lists {
            for b in &lists {
                let want = a.join(";").cmp(&b.join(";"));
                assert_eq!(places(a).cmp(&places(b)), want, "{a:?} against {b:?}");
            }
        }
        // Each name has two places, all different.
        let mut all: Vec<u32> = names
            .iter()
            .flat_map(|n| [pieces.places(n).followed, pieces.places(n).last])
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, (0..2 * names.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn names_that_hold_a_semicolon_or_are_empty_have_no_places() {
        assert!(Pieces::of(["a", "b;c"].into_iter()).is_none());
        assert!(Pieces::of([";"].into_iter()).is_none());
        assert!(Pieces::of(["a", ""].into_iter()).is_none());
        assert!(Pieces::of(["a", "b"].into_iter()).is_some());
    }
}
