//! `/flamegraph:FILE`: an interactive SVG flame graph of the folded stacks, drawn by the
//! `inferno` crate (docs/output.md, "Functions, folded stacks and flame graphs").
//!
//! Widths are proportional to hits. inferno counts in machine words, so when the stacks'
//! total does not fit, every count is divided by one common factor, rounded up so that no
//! stack disappears, and the subtitle says so; the folded lines themselves stay exact.
//!
//! A frame the compiler inlined carries FlameGraph's `_[i]` suffix, which only FlameGraph's
//! `java` palette colours apart (aqua); with the `hot` palette drawn here, every such frame
//! is given an aqua of its own through inferno's palette map, so that inlined code stands
//! out from the red-to-yellow of the rest.

use std::io::{self, Write};

use inferno::flamegraph::color::{Color, PaletteMap};
use inferno::flamegraph::{self, Options};

use crate::engine::threads;
use crate::format::record::SampleKind;

/// inferno draws a frame of at least a ten-thousandth of the total (its `min_width`, 0.01%);
/// the stacks given to it may leave out the frames of less than half that
/// ([`StackProfile::drawn`](crate::analysis::profile::StackProfile::drawn)): the picture is the
/// same.
pub(crate) const DRAWN_PARTS: u128 = 20_000;

/// The largest total drawn unscaled: half the word, leaving inferno room to add.
const LIMIT: u128 = (usize::MAX / 2) as u128;

/// What the flame graph shows: the counts it was given, or how they were scaled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Drawn {
    /// The common divisor of every count, 1 when none was needed.
    pub factor: u128,
}

/// Writes the flame graph of `folded` (`stack hits` pairs, as [`StackProfile::folded`] gives
/// them) to `out`, titled `title`.
///
/// [`StackProfile::folded`]: crate::analysis::profile::StackProfile::folded
pub(crate) fn write(
    out: impl Write,
    title: &str,
    folded: Vec<(String, u128)>,
    icicle: bool,
) -> io::Result<Drawn> {
    Drawing::of(folded).write(out, title, icicle)
}

/// The size of a drawing's lines above which the flame graph and the icicle graph are drawn
/// one after the other: inferno holds a table of every frame while it draws, about as large
/// as the lines, and the drawing itself grows with them.
const DRAWN_APART: usize = 4 << 20;

/// The flame graph and the icicle graph of `folded`, titled `title`, as [`write()`] draws each:
/// their lines made once, the two drawn at once when there is a second core and the lines
/// are small enough that two drawings' tables fit the exporters' memory.
pub(crate) fn both(title: &str, folded: Vec<(String, u128)>) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let drawing = Drawing::of(folded);
    let size: usize = drawing.lines.iter().map(String::len).sum();
    let draw = |svg: &mut Vec<u8>, icicle| drawing.write(svg, title, icicle).map(|_| ());
    if size > DRAWN_APART {
        return Ok((drawn(&draw, false)?, drawn(&draw, true)?));
    }
    both_ways(draw)
}

/// What `draw` draws into a new buffer, upside down when `icicle`.
fn drawn(
    draw: &impl Fn(&mut Vec<u8>, bool) -> io::Result<()>,
    icicle: bool,
) -> io::Result<Vec<u8>> {
    let mut svg = Vec::new();
    draw(&mut svg, icicle).map(|()| svg)
}

/// What `draw` draws into a buffer given, the right way up (`false`), then upside down
/// (`true`): the two at once when there is a second core.
pub(crate) fn both_ways(
    draw: impl Fn(&mut Vec<u8>, bool) -> io::Result<()> + Sync,
) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let drawn = |icicle| drawn(&draw, icicle);
    if !threads::two_cores() {
        return Ok((drawn(false)?, drawn(true)?));
    }
    std::thread::scope(|s| {
        let icicle = s.spawn(|| drawn(true));
        let flame = drawn(false);
        let icicle = threads::joined(icicle);
        Ok((flame?, icicle?))
    })
}

/// What inferno is given to draw `folded`, made once for drawing it either way up.
struct Drawing {
    /// `stack count`, as [`lines`] makes them.
    lines: Vec<String>,
    factor: u128,
    /// The colours of the inlined frames.
    inlined: PaletteMap,
}

impl Drawing {
    fn of(folded: Vec<(String, u128)>) -> Drawing {
        let inlined = inlined_colours(&folded);
        let (lines, factor) = lines(folded);
        Drawing {
            lines,
            factor,
            inlined,
        }
    }

    fn write(&self, out: impl Write, title: &str, icicle: bool) -> io::Result<Drawn> {
        let factor = self.factor;
        if self.lines.is_empty() {
            nothing(out, title)?;
            return Ok(Drawn { factor });
        }
        let mut options = Options::default();
        options.title = title.to_owned();
        options.count_name = "hits".to_owned();
        if icicle {
            options.direction = flamegraph::Direction::Inverted;
        }
        // The same input draws the same picture: colours by name, not at random.
        options.hash = true;
        options.deterministic = true;
        if factor > 1 {
            options.subtitle = Some(format!(
                "hits divided by {factor} (rounded up) to fit the drawing; the folded stacks are exact"
            ));
        }
        // inferno adds the colour of every frame it draws to the map: each drawing has its own.
        let mut inlined = self.inlined.clone();
        options.palette_map = Some(&mut inlined);
        flamegraph::from_lines(&mut options, self.lines.iter().map(String::as_str), out)
            .map_err(io::Error::other)?;
        Ok(Drawn { factor })
    }
}

/// Writes the differential flame graph of NEW's stacks against BASE's (`/compare BASE NEW
/// /flamegraph:FILE`): NEW's stacks, each frame coloured by how its share changed from BASE,
/// red where it grew, blue where it shrank, as inferno's differential mode draws them. BASE
/// is scaled to NEW's total first (inferno's normalisation), so that traces of different
/// lengths compare.
pub(crate) fn write_differential(
    out: impl Write,
    title: &str,
    base: &[(String, u128)],
    new: &[(String, u128)],
    icicle: bool,
) -> io::Result<Drawn> {
    if new.is_empty() {
        nothing(out, title)?;
        return Ok(Drawn { factor: 1 });
    }
    // Each side within the word first; normalising makes their factors moot.
    let (base_lines, _) = lines(base.to_vec());
    let (new_lines, factor) = lines(new.to_vec());
    let text = |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut merged = Vec::new();
    let options = inferno::differential::Options {
        normalize: true,
        strip_hex: false,
    };
    inferno::differential::from_readers(
        options,
        text(&base_lines).as_bytes(),
        text(&new_lines).as_bytes(),
        &mut merged,
    )?;
    let merged = String::from_utf8_lossy(&merged);
    let mut options = Options::default();
    options.title = title.to_owned();
    let subtitle = "widths: NEW's hits; red: a frame's own hits a larger share than in BASE, \
                    blue: a smaller one";
    options.subtitle = Some(subtitle.to_owned());
    options.count_name = "hits".to_owned();
    if icicle {
        options.direction = flamegraph::Direction::Inverted;
    }
    options.hash = true;
    options.deterministic = true;
    flamegraph::from_lines(&mut options, merged.lines(), out).map_err(io::Error::other)?;
    Ok(Drawn { factor })
}

/// A picture of nothing: the title, and a line saying there were no samples to draw (inferno
/// refuses empty input).
fn nothing(mut out: impl Write, title: &str) -> io::Result<()> {
    let escaped = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    write!(
        out,
        "<?xml version=\"1.0\" standalone=\"no\"?>\n\
         <svg version=\"1.1\" width=\"1200\" height=\"80\" viewBox=\"0 0 1200 80\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#eeeeee\"/>\n\
         <text x=\"600\" y=\"30\" text-anchor=\"middle\" font-family=\"Verdana\" \
         font-size=\"17\">{escaped}</text>\n\
         <text x=\"600\" y=\"60\" text-anchor=\"middle\" font-family=\"Verdana\" \
         font-size=\"12\">No samples: nothing to draw.</text>\n\
         </svg>\n"
    )
}

/// An aqua for every inlined frame (`name_[i]`) of `folded`, varied by a hash of its name
/// as inferno varies its palettes' colours, the same for the same name.
fn inlined_colours(folded: &[(String, u128)]) -> PaletteMap {
    let mut map = PaletteMap::default();
    for (stack, _) in folded {
        for frame in stack.split(';').filter(|f| f.ends_with("_[i]")) {
            if map.get(frame).is_none() {
                // FNV-1a, scaled to [0, 1).
                let hash = frame.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                let v = (hash >> 56) as u8;
                // inferno's aqua: r 50..110, g and b 165..220.
                let color = Color {
                    r: 50 + (u16::from(v) * 60 / 255) as u8,
                    g: 165 + (u16::from(v) * 55 / 255) as u8,
                    b: 165 + (u16::from(v) * 55 / 255) as u8,
                };
                map.insert(frame, color);
            }
        }
    }
    map
}

/// The lines inferno reads, `stack count`, their counts divided by a common factor when
/// their total would not fit; every count stays at least 1. Each stack's text becomes its
/// line, so the text is not held twice. In the order of `folded`: inferno sorts them itself,
/// by their bytes, before it merges the frames of consecutive lines.
fn lines(folded: Vec<(String, u128)>) -> (Vec<String>, u128) {
    let total: u128 = folded.iter().map(|(_, hits)| hits).sum();
    let factor = scale(total, folded.len());
    let lines = folded
        .into_iter()
        .map(|(mut line, hits)| {
            line.push(' ');
            line.push_str(&hits.div_ceil(factor).to_string());
            line
        })
        .collect();
    (lines, factor)
}

/// The smallest divisor that brings `total`, spread over `lines` counts each rounded up,
/// within [`LIMIT`].
fn scale(total: u128, lines: usize) -> u128 {
    if total <= LIMIT {
        return 1;
    }
    // Rounding up adds less than one per line: sum(ceil(c / f)) < total / f + lines.
    let room = LIMIT - (lines as u128).min(LIMIT / 2);
    total.div_ceil(room)
}

/// What a flame graph of a source without call stacks shows.
pub(crate) fn source_drawn(source: SampleKind) -> String {
    match source {
        SampleKind::Lbr => "LBR branch targets".to_owned(),
        other => format!("{} samples", other.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::keys::plain;
    use crate::analysis::stacks::StackCounts;
    use crate::format::opcode::Opcode;
    use crate::format::record::Samples;
    use crate::format::stackorder::StackOrder;
    use crate::format::tables::Tables;

    /// Leaving out the frames too narrow to be drawn changes nothing of the picture: on a
    /// profile of a few wide stacks and thousands of narrow, deep ones (some below a
    /// ten-thousandth of the total, some between it and half of it, some above), the SVG
    /// of every stack and that of the drawn ones are the same bytes, and far fewer lines
    /// are drawn.
    #[test]
    fn narrow_frames_left_out_draw_the_same_picture() {
        let mut counts = StackCounts::default();
        let mut add = |hits: u128, frames: &[u32]| {
            let payload: Vec<u8> = frames.iter().flat_map(|f| f.to_le_bytes()).collect();
            counts.add(&Samples {
                offset: 0,
                opcode: Opcode::ETW_CALLSTACK,
                progid: Some(0),
                hits,
                count: frames.len() as u8,
                payload: &payload,
            });
        };
        // Leaf first: a wide path, and under it thousands of distinct narrow subtrees.
        add(5_000_000, &[0x30, 0x20, 0x10]);
        add(3_000_000, &[0x40, 0x10]);
        let mut x: u32 = 1;
        for i in 0..3000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            // Root first, four ways at each level, 2 to 31 deep; then leaf first.
            let mut frames = vec![0x10, 0x20, 0x50 + i % 7];
            frames.extend((0..x % 30 + 2).map(|d| 0x1000 + d * 16 + (x >> (d % 24)) % 4));
            frames.reverse();
            // 1 to 40 hits, of about 8.1 million: each stack below a twenty-thousandth (400),
            // its shared frames below it, between it and a ten-thousandth, and above.
            add(u128::from(1 + x % 40), &frames);
        }
        let profile = counts.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        let (all, drawn) = (profile.folded(), profile.drawn(DRAWN_PARTS));
        assert!(
            drawn.len() * 4 < all.len(),
            "{} of {} lines",
            drawn.len(),
            all.len()
        );
        let total = |f: &[(String, u128)]| f.iter().map(|(_, h)| h).sum::<u128>();
        assert_eq!(total(&all), total(&drawn), "every hit is kept");
        let (a, b) = (svg(&all).0, svg(&drawn).0);
        if a != b {
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            panic!(
                "the pictures differ at byte {at}:\n{}\n---\n{}",
                &a[at.saturating_sub(300)..(at + 300).min(a.len())],
                &b[at.saturating_sub(300)..(at + 300).min(b.len())]
            );
        }
    }

    /// An inlined frame's aqua comes from the FNV-1a hash of its name, its top byte scaled
    /// into inferno's aqua range. The expected colours were worked out apart from this code,
    /// from FNV-1a's definition (offset basis 0xcbf29ce484222325, prime 0x100000001b3;
    /// it gives the published 0xaf63dc4c8601ec8c for "a"): "mix_[i]" hashes to
    /// 0x909e27c23f5568c9, top byte 144, so r = 50 + 144 * 60 / 255 = 83 and g = b = 165 +
    /// 144 * 55 / 255 = 196; "inline.exe!rotate_[i]" to 0x6adb87b8176af0d2, 106: 74, 187.
    #[test]
    fn an_inlined_frame_is_aqua_by_the_hash_of_its_name() {
        let folded = [
            ("main;mix_[i]".to_owned(), 3),
            ("main;inline.exe!rotate_[i];mix_[i]".to_owned(), 1),
        ];
        let map = inlined_colours(&folded);
        let aqua = |r, gb| Some(Color { r, g: gb, b: gb });
        assert_eq!(map.get("mix_[i]"), aqua(83, 196));
        assert_eq!(map.get("inline.exe!rotate_[i]"), aqua(74, 187));
        assert_eq!(map.get("main"), None, "not inlined: inferno's own colours");
    }

    /// The flame graph and the icicle graph drawn together are the two drawn one by one,
    /// each the right way up.
    #[test]
    fn both_ways_up_at_once_are_each_drawn_alone() {
        let folded = [
            ("main;parse;mix_[i]".to_owned(), 5),
            ("main;parse".to_owned(), 2),
            ("main;write".to_owned(), 3),
        ];
        let alone = |icicle| {
            let mut svg = Vec::new();
            write(&mut svg, "trace.spt", folded.to_vec(), icicle).unwrap();
            svg
        };
        let (flame, icicle) = both("trace.spt", folded.to_vec()).unwrap();
        assert_ne!(flame, icicle);
        assert!(flame == alone(false), "the flame graph");
        assert!(icicle == alone(true), "the icicle graph");
        let (flame, icicle) = both("empty.spt", Vec::new()).unwrap();
        assert_eq!(flame, icicle, "nothing to draw either way up");
    }

    /// inferno sorts the lines it is given, by their bytes, as FlameGraph's own scripts do:
    /// in whatever order they come, the picture is the same. So a frame whose name another
    /// frame's extends may be two boxes: `a;b 1` sorts before `a;b1 3`, and that before
    /// `a;b;c 2`.
    #[test]
    fn lines_in_any_order_draw_one_picture() {
        let lines = ["a;b", "a;b;c", "a;b1", "a;b;d", "a", "e;f"];
        let folded: Vec<(String, u128)> = lines
            .iter()
            .zip(1..)
            .map(|(l, hits)| (l.to_string(), hits))
            .collect();
        let first = svg(&folded).0;
        let mut turned = folded.clone();
        for _ in 0..folded.len() {
            turned.rotate_left(1);
            assert_eq!(svg(&turned).0, first);
            turned.reverse();
            assert_eq!(svg(&turned).0, first);
        }
        assert_eq!(first.matches("<title>b (").count(), 2, "{first}");
    }

    /// A drawing whose hits fit says nothing of dividing them.
    #[test]
    fn hits_that_fit_are_drawn_as_they_are() {
        let (text, drawn) = svg(&[("main;work".to_owned(), 7), ("main".to_owned(), 2)]);
        assert_eq!(drawn.factor, 1);
        assert!(!text.contains("divided by"), "{text}");
        assert!(text.contains("main (9 hits"), "{text}");
    }

    fn svg(folded: &[(String, u128)]) -> (String, Drawn) {
        let mut out = Vec::new();
        let drawn = write(&mut out, "trace.spt", folded.to_vec(), false).unwrap();
        (String::from_utf8(out).unwrap(), drawn)
    }

    #[test]
    fn draws_every_frame_with_its_hits() {
        let (text, drawn) = svg(&[
            ("app.exe!main;app.exe!parse".to_owned(), 3),
            ("app.exe!main;app.exe!lex".to_owned(), 1),
        ]);
        assert_eq!(drawn.factor, 1);
        assert!(text.starts_with("<?xml"), "{}", &text[..80]);
        assert!(text.contains("trace.spt"), "titled with the trace");
        for frame in [
            "app.exe!main (4 hits, 100.00%)",
            "app.exe!parse (3 hits, 75.00%)",
        ] {
            assert!(text.contains(frame), "{frame}");
        }
        // The same input draws the same picture.
        assert_eq!(
            svg(&[("a;b".to_owned(), 2)]).0,
            svg(&[("a;b".to_owned(), 2)]).0
        );
    }

    #[test]
    fn counts_past_the_word_are_scaled_and_no_stack_is_lost() {
        let huge = u128::from(u64::MAX) * 4;
        let folded = [("a;b".to_owned(), huge), ("a;c".to_owned(), 1)];
        let (text, drawn) = svg(&folded);
        assert!(drawn.factor > 1);
        assert!(text.contains("hits divided by"), "the subtitle says so");
        let (lines, factor) = lines(folded.to_vec());
        assert_eq!(factor, drawn.factor);
        assert_eq!(lines[1], "a;c 1", "a stack too small to scale still counts");
        let counts: Vec<u128> = lines
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
            .collect();
        assert!(counts.iter().sum::<u128>() <= LIMIT);
    }

    #[test]
    fn scale_is_one_until_the_limit() {
        assert_eq!(scale(LIMIT, 10), 1);
        assert!(scale(LIMIT + 1, 10) >= 2);
        assert!(scale(u128::MAX, 1000) < u128::MAX);
    }

    /// Past the limit the divisor leaves each line a count of rounding up: it divides the
    /// total into LIMIT - lines, rounding up.
    #[test]
    fn scale_leaves_room_for_each_line_s_rounding() {
        assert_eq!(scale(LIMIT + 1, 10), 2);
        assert_eq!(scale(2 * (LIMIT - 10), 10), 2);
        assert_eq!(scale(2 * (LIMIT - 10) + 1, 10), 3);
        assert_eq!(scale(3 * (LIMIT - 1), 1), 3);
    }
}
