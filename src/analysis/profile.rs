//! A profile's call stacks by key, and the folded lines of it that the views print and
//! draw.

use rustc_hash::FxHashSet;

use crate::analysis::joined::{self, joined_cmp};
use crate::analysis::keys::FrameKey;
use crate::engine::slices::{SliceCounts, Slices};
use crate::format::record::SampleKind;

/// The call stacks of a trace by key, per binary in progid order.
#[derive(Debug, Default)]
pub(crate) struct StackProfile {
    /// The binaries with call stacks.
    pub binaries: Vec<BinaryStacks>,
}

/// One binary's call stacks.
#[derive(Debug)]
pub(crate) struct BinaryStacks {
    /// Its program ID.
    pub progid: u16,
    /// Its name, as keys use it.
    pub name: String,
    /// What the stacks are: call stacks, or the samples of an IP event or the targets of
    /// LBR branches, one address each ([`flat`](super::sampled::flat)).
    pub source: SampleKind,
    /// Call-stack records with at least one frame (or the source's records).
    pub records: u64,
    /// Their summed hits.
    pub hits: u128,
    /// The keys, which the stacks index.
    pub keys: Vec<FrameKey>,
    /// The stacks by key, outermost frame first, each with its hits; sorted by keys.
    pub stacks: Paths,
}

/// Distinct stacks of keys, outermost frame first, each with its hits, their keys one after
/// another in one vector: a stack of one key (an IP sample's address) takes 28 bytes, where
/// a vector of its own would take a heap block besides. Stacks folded in any order are
/// sorted by a permutation, not moved.
#[derive(Debug, Default)]
pub(crate) struct Paths {
    pub(super) stacks: Slices<u32>,
    /// The stacks in order, as indices into `stacks`; empty when they are stored in order.
    pub(super) order: Vec<usize>,
}

impl Paths {
    /// Room for the stacks of a flat profile: one per key with hits in `by_key`, and the
    /// `longer` ones. What is reserved changes memory alone.
    pub(super) fn room_for(by_key: &[u128], longer: &[(Vec<u32>, u128)]) -> Paths {
        let singles = by_key.iter().filter(|&&h| h > 0).count();
        Paths {
            stacks: Slices::with_capacity(singles + longer.len()),
            order: Vec::new(),
        }
    }

    /// The distinct stacks of `stacks`, their key `k` renumbered `number[k]`, sorted by keys.
    pub(super) fn sorted(stacks: SliceCounts<u32>, number: &[u32]) -> Paths {
        let mut stacks = stacks.into_slices();
        stacks.map_items(|k| number[k as usize]);
        let mut order: Vec<usize> = (0..stacks.len()).collect();
        order.sort_unstable_by(|&a, &b| stacks.get(a).0.cmp(stacks.get(b).0));
        Paths { stacks, order }
    }

    /// Appends a stack that sorts after those before it.
    pub(super) fn push(&mut self, path: &[u32], hits: u128) {
        self.stacks.push(path, hits);
    }

    /// Where the `i`-th stack in order is stored.
    pub(super) fn at(&self, i: usize) -> usize {
        if self.order.is_empty() {
            i
        } else {
            self.order[i]
        }
    }

    /// How many stacks there are.
    pub(crate) fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Stack `i`: its keys and hits.
    pub(crate) fn get(&self, i: usize) -> (&[u32], u128) {
        self.stacks.get(self.at(i))
    }

    /// Every stack, in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&[u32], u128)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The summed hits of the stacks in `range`.
    pub(crate) fn hits(&self, range: std::ops::Range<usize>) -> u128 {
        range.map(|i| self.stacks.hits(self.at(i))).sum()
    }
}

impl BinaryStacks {
    /// The name of key `k`.
    pub(crate) fn key_name(&self, k: u32) -> String {
        self.keys[k as usize].name(&self.name)
    }
}

impl StackProfile {
    /// Whether no binary has a call stack.
    pub(crate) fn is_empty(&self) -> bool {
        self.binaries.is_empty()
    }

    /// The folded stacks (docs/output.md): `outer;...;leaf hits`, one line per distinct stack of
    /// names (two functions of one name fold together), sorted by byte value.
    pub(crate) fn folded(&self) -> Vec<(String, u128)> {
        self.folded_lines().to_vec()
    }

    /// The same lines, each made when it is written.
    pub(crate) fn folded_lines(&self) -> Folded<'_> {
        fold(self.binaries.iter(), false, None)
    }

    /// The folded stacks a flame graph draws: as [`StackProfile::folded`], but the stacks
    /// through a frame whose hits are less than one `parts`-th of all the hits (too narrow
    /// to be drawn, and so everything above it) end at that frame, as one line: every frame
    /// drawn keeps its place, width and count. Far fewer, shorter lines for a profile of
    /// many deep, distinct stacks.
    pub(crate) fn drawn(&self, parts: u128) -> Vec<(String, u128)> {
        fold(self.binaries.iter(), false, Some(parts)).to_vec()
    }
}

/// The folded stacks of the `source` stacks of `sampled`, each under a frame named for its
/// binary: for a flame graph of samples without call stacks.
pub(crate) fn folded_by_binary(
    sampled: &[BinaryStacks],
    source: SampleKind,
    parts: Option<u128>,
) -> Vec<(String, u128)> {
    fold(sampled.iter().filter(|b| b.source == source), true, parts).to_vec()
}

/// The folded lines of the `source` stacks of `sampled`, each under its binary, as
/// `/folded` prints them.
pub(crate) fn folded_of_binaries(sampled: &[BinaryStacks], source: SampleKind) -> Folded<'_> {
    fold(sampled.iter().filter(|b| b.source == source), true, None)
}

/// Folds the stacks of `binaries` by name, each under its binary's name when `under_binary`;
/// with `parts`, without the frames of less than one `parts`-th of all the hits
/// ([`StackProfile::drawn`]).
pub(super) fn fold<'b>(
    binaries: impl Iterator<Item = &'b BinaryStacks> + Clone,
    under_binary: bool,
    parts: Option<u128>,
) -> Folded<'b> {
    let total: u128 = binaries.clone().map(|b| b.hits).sum();
    let visible = |hits: u128| match parts {
        Some(parts) => hits.checked_mul(parts).is_none_or(|h| h >= total),
        None => true,
    };
    let mut folded = Folded::default();
    for (binary, b) in binaries.enumerate() {
        let names: Vec<String> = b.keys.iter().map(|k| k.frame_name(&b.name)).collect();
        // Narrow frames are left out by key, which is only leaving them out by name when no
        // two keys have one name (else their frames are one, whose width is their sum).
        let unique = names.iter().collect::<FxHashSet<_>>().len() == names.len();
        let narrow = match parts.is_some() && unique {
            true => narrow_frames(&b.stacks, visible),
            false => Vec::new(),
        };
        let mut narrow = narrow.into_iter().peekable();
        let mut i = 0;
        while i < b.stacks.len() {
            let (keys, mut hits) = b.stacks.get(i);
            let mut kept = keys.len();
            let stack = i;
            i += 1;
            if let Some(&(start, end, depth)) = narrow.peek()
                && start == stack
            {
                // The stacks through a narrow frame, as one line ending there: in its place
                // among its siblings, with its width, and drawn no more than before.
                narrow.next();
                hits = b.stacks.hits(start..end);
                kept = depth + 1;
                i = end;
            }
            folded.lines.push(Line {
                binary,
                stack,
                kept,
                hits,
                leading: 0,
            });
        }
        // A line starts with its binary's name, unless that is empty.
        let under = Some(b.name.as_str()).filter(|n| under_binary && !n.is_empty());
        folded.binaries.push(FoldedBinary {
            stacks: &b.stacks,
            names,
            under,
        });
    }
    folded.sort();
    folded
}

/// Folded stacks, each line made when it is asked for: a stack of one binary (or its
/// frames a flame graph draws) by name, the lines in byte order, equal ones summed. A
/// line's text is not held: deep stacks make long lines, and many.
#[derive(Default)]
pub(crate) struct Folded<'b> {
    pub(super) binaries: Vec<FoldedBinary<'b>>,
    pub(super) lines: Vec<Line>,
}

/// A binary's stacks and the names of their keys.
pub(super) struct FoldedBinary<'b> {
    pub(super) stacks: &'b Paths,
    pub(super) names: Vec<String>,
    /// The binary's name, first on each line, when the lines are under it.
    pub(super) under: Option<&'b str>,
}

/// A line: its binary's `stack`-th stack, its first `kept` frames, with `hits`.
#[derive(Clone, Copy)]
pub(super) struct Line {
    pub(super) binary: usize,
    pub(super) stack: usize,
    pub(super) kept: usize,
    pub(super) hits: u128,
    /// The places of its first two pieces, in the high and low halves (the second's + 1, 0
    /// for none), when the lines are sorted by places: many lines differ there, and compare
    /// without reading their stacks.
    pub(super) leading: u64,
}

impl<'b> Folded<'b> {
    /// The names a line is made of, to be joined by `;`.
    pub(super) fn parts<'s>(
        binaries: &'s [FoldedBinary<'b>],
        l: &Line,
    ) -> impl Iterator<Item = &'s str> {
        let b = &binaries[l.binary];
        let (keys, _) = b.stacks.get(l.stack);
        let names = keys[..l.kept].iter().map(|&k| b.names[k as usize].as_str());
        b.under.into_iter().chain(names)
    }

    /// Puts the lines in the byte order of their text and sums the equal ones: by the places
    /// of their pieces ([`joined::places`]), or, when a name is empty or holds a `;`, byte by byte.
    pub(super) fn sort(&mut self) {
        let Folded { binaries, lines } = self;
        // Every binary's name, if its lines start with it, then its keys' names; per binary,
        // where its own start and whether the first is its name.
        let mut names: Vec<&str> = Vec::new();
        let mut starts: Vec<(usize, bool)> = Vec::with_capacity(binaries.len());
        for b in binaries.iter() {
            starts.push((names.len(), b.under.is_some()));
            names.extend(b.under);
            names.extend(b.names.iter().map(String::as_str));
        }
        let Some(places) = joined::places(&names) else {
            let binaries = &*binaries;
            return sort_and_sum(lines, |a, b| {
                joined_cmp(Self::parts(binaries, a), Self::parts(binaries, b))
            });
        };
        drop(names);
        let line = |l: &Line| {
            let (start, under) = starts[l.binary];
            let under = under.then(|| places[start]);
            let keys = &places[start + usize::from(under.is_some())..];
            let (stack, _) = binaries[l.binary].stacks.get(l.stack);
            let names = under
                .into_iter()
                .chain(stack[..l.kept].iter().map(|&k| keys[k as usize]));
            joined::line(names, usize::from(under.is_some()) + l.kept)
        };
        for l in lines.iter_mut() {
            l.leading = leading(line(l));
        }
        sort_and_sum(lines, |a, b| {
            a.leading.cmp(&b.leading).then_with(|| line(a).cmp(line(b)))
        });
    }

    /// Calls `f` with each line, in order: its text (`outer;...;leaf`) and hits.
    pub(crate) fn try_for_each<E>(
        &self,
        mut f: impl FnMut(&str, u128) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut text = String::new();
        for l in &self.lines {
            text.clear();
            for (i, part) in Self::parts(&self.binaries, l).enumerate() {
                if i > 0 {
                    text.push(';');
                }
                text.push_str(part);
            }
            f(&text, l.hits)?;
        }
        Ok(())
    }

    /// Every line, made.
    pub(crate) fn to_vec(&self) -> Vec<(String, u128)> {
        let mut lines = Vec::with_capacity(self.lines.len());
        let made: Result<(), std::convert::Infallible> = self.try_for_each(|text, hits| {
            lines.push((text.to_owned(), hits));
            Ok(())
        });
        let Ok(()) = made;
        lines
    }
}

/// The places of a line's first two pieces, for [`Line::leading`]: the first in the high
/// half, the second's + 1 in the low one, or 0 when there is none. Lines compare as these do,
/// where they differ (the + 1 saturates: a tie sends the comparison on to the whole lines).
pub(super) fn leading(mut pieces: impl Iterator<Item = u32>) -> u64 {
    let first = pieces.next().unwrap_or_default();
    let second = pieces.next().map_or(0, |p| p.saturating_add(1));
    u64::from(first) << 32 | u64::from(second)
}

/// Sorts `lines` by `cmp` and sums the hits of equal ones into the first.
pub(super) fn sort_and_sum(
    lines: &mut Vec<Line>,
    cmp: impl Fn(&Line, &Line) -> std::cmp::Ordering,
) {
    lines.sort_unstable_by(&cmp);
    lines.dedup_by(|next, kept| {
        let equal = cmp(kept, next).is_eq();
        if equal {
            kept.hits += next.hits;
        }
        equal
    });
}

/// The outermost frames that are not `visible` in `stacks` (sorted by path: each frame's
/// stacks are consecutive), each as the range of its stacks and its depth, in order.
pub(super) fn narrow_frames(
    stacks: &Paths,
    visible: impl Fn(u128) -> bool,
) -> Vec<(usize, usize, usize)> {
    // The frames of the current path, outermost first: where their stacks start, and the
    // hits so far.
    let mut open: Vec<(usize, u128)> = Vec::new();
    let mut narrow: Vec<(usize, usize, usize)> = Vec::new();
    // Closes the frames deeper than `depth`, their stacks ending before `end`. A frame closes
    // after the frames under it: a narrow one takes their place in `narrow`.
    let mut close = |open: &mut Vec<(usize, u128)>, depth: usize, end: usize| {
        while open.len() > depth {
            let at = open.len() - 1;
            let (start, hits) = open.pop().unwrap_or_default();
            if !visible(hits) {
                while narrow.last().is_some_and(|&(s, _, _)| s >= start) {
                    narrow.pop();
                }
                narrow.push((start, end, at));
            }
        }
    };
    let mut previous: &[u32] = &[];
    for (i, (path, hits)) in stacks.iter().enumerate() {
        let common = previous
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        close(&mut open, common, i);
        open.extend((common..path.len()).map(|_| (i, 0)));
        for frame in &mut open {
            frame.1 += hits;
        }
        previous = path;
    }
    close(&mut open, 0, stacks.len());
    narrow
}
