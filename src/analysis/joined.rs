//! The byte order of lists of names joined by `;` (a folded line's text), without joining
//! them.
//!
//! Folded lines are sorted by their text, but a line's text is never held: a profile of deep,
//! distinct stacks makes long lines, and many. [`joined_cmp`] compares two lists of names as
//! their text, byte by byte. [`places`] does the same in a few integer comparisons per name,
//! when no name is empty or holds a `;`: the text is then cut into pieces in one way only,
//! each a name followed by `;` (a name with more after it) or by the line's end (the last),
//! and two lines compare as their pieces do, one after another.
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

/// The places of the pieces of `names` (a name may come more than once), in their order;
/// `None` when a name holds a `;` or is empty, which makes the pieces of a line more than one
/// cut of its text (`a;b` is also the one name `a;b`, the empty line also one empty name).
pub(crate) fn places(names: &[&str]) -> Option<Vec<Places>> {
    if names.iter().any(|n| n.is_empty() || n.contains(';')) {
        return None;
    }
    // In byte order, a name comes before the names it starts; its piece that ends a line is
    // below all of theirs, and its piece followed by `;` above those whose next byte is below
    // `;` and below the rest. So each name's `;` piece waits, on a stack of the names the
    // current one starts, until a name that does not go under it.
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_unstable_by_key(|&i| names[i]);
    let mut out = vec![Places::default(); names.len()];
    let mut next = 0;
    // Gives the next place to the names at `order[range]`, one name, as `followed` or `last`.
    let mut place = |out: &mut [Places], range: std::ops::Range<usize>, followed: bool| {
        // Two pieces per name, and fewer names than 2^31 fit in memory.
        let place = u32::try_from(next).expect("fewer than 2^32 pieces");
        next += 1;
        for &i in &order[range] {
            match followed {
                true => out[i].followed = place,
                false => out[i].last = place,
            }
        }
    };
    let mut open: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let name = names[order[start]];
        let end = start
            + order[start..]
                .iter()
                .take_while(|&&i| names[i] == name)
                .count();
        while let Some(before) = open.pop_if(|b| !goes_under(name, names[order[b.start]])) {
            place(&mut out, before, true);
        }
        place(&mut out, start..end, false);
        open.push(start..end);
        start = end;
    }
    while let Some(before) = open.pop() {
        place(&mut out, before, true);
    }
    Some(out)
}

/// The places of the pieces of a line of `len` names, whose places are `names`: each name
/// followed by `;`, the last ending the line. Two lines compare as these do.
pub(crate) fn line(names: impl Iterator<Item = Places>, len: usize) -> impl Iterator<Item = u32> {
    names.enumerate().map(move |(i, p)| match i + 1 == len {
        true => p.last,
        false => p.followed,
    })
}

/// Whether the pieces of `name` go below the piece `before` followed by `;`: `before`
/// starts `name`, whose next byte is below `;`.
fn goes_under(name: &str, before: &str) -> bool {
    name.strip_prefix(before)
        .is_some_and(|rest| rest.bytes().next().is_some_and(|b| b < b';'))
}

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

    /// The places of each of `names`, by name.
    fn placed<'s>(names: &[&'s str]) -> impl Fn(&str) -> Places + 's {
        let places = places(names).expect("no name is empty or holds a `;`");
        let names = names.to_vec();
        move |n| {
            places[names
                .iter()
                .position(|&m| m == n)
                .expect("one of the names")]
        }
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
        let of = placed(&names);
        let places = |l: &[&str]| -> Vec<u32> { line(l.iter().map(|n| of(n)), l.len()).collect() };
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
            .flat_map(|n| [of(n).followed, of(n).last])
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, (0..2 * names.len() as u32).collect::<Vec<_>>());
    }

    /// The piece `name`, followed by `;` or ending its line, as a byte value + 1 per byte and
    /// 0 for the end, which is below every byte: pieces compare as these do.
    fn piece(name: &str, followed: bool) -> impl Iterator<Item = u16> + '_ {
        let after = if followed { u16::from(b';') + 1 } else { 0 };
        name.bytes()
            .map(|b| u16::from(b) + 1)
            .chain(std::iter::once(after))
    }

    #[test]
    fn pieces_are_placed_in_the_order_they_compare_byte_by_byte() {
        // Every name of one to three bytes of `0` and `:` (below `;`), `<` and `b` (above),
        // so that names start others with each next byte.
        let alphabet = ["0", ":", "<", "b"];
        let mut names: Vec<String> = Vec::new();
        for a in alphabet {
            names.push(a.to_owned());
            for b in alphabet {
                names.push(format!("{a}{b}"));
                names.extend(alphabet.iter().map(|c| format!("{a}{b}{c}")));
            }
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let of = placed(&names);
        // A name given twice has its places twice.
        let twice = places(&[&names[..], &names[..]].concat()).expect("placed");
        assert_eq!(twice[..names.len()], twice[names.len()..]);
        let mut want: Vec<(&str, bool)> = names
            .iter()
            .flat_map(|&n| [(n, false), (n, true)])
            .collect();
        want.sort_by(|&(x, xf), &(y, yf)| piece(x, xf).cmp(piece(y, yf)));
        let mut got = want.clone();
        got.sort_by_key(|&(name, followed)| {
            let p = of(name);
            if followed { p.followed } else { p.last }
        });
        assert_eq!(got, want);
        // One place each, 0 to 2n - 1.
        let mut all: Vec<u32> = names
            .iter()
            .flat_map(|n| [of(n).followed, of(n).last])
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..2 * names.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn names_that_hold_a_semicolon_or_are_empty_have_no_places() {
        assert!(places(&["a", "b;c"]).is_none());
        assert!(places(&[";"]).is_none());
        assert!(places(&["a", ""]).is_none());
        assert!(places(&["a", "b"]).is_some());
    }
}
