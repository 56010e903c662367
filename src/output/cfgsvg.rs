//! A function's graph as a picture (`/cfg:FUNCTION /svg:FILE`, and the report's LBR
//! section): its blocks as boxes, the entry and the exit as circles, laid out in layers by
//! the `layout-rs` crate (as `dot` lays a graph out). A block is filled from white to red by
//! its flow, the hottest reddest; a block that ran by the flow but that no range covered
//! (falsely cold) is drawn with a thick blue border; an edge is as thick as its flow, and
//! says it.

use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;

use crate::analysis::lbr::cfg::{CfgBlock, FunctionCfg};
use crate::image::guard::guarded;

/// The most blocks a picture draws: past this a layout is slow and no one can read it.
pub(crate) const DRAWN_AT_MOST: usize = 400;

/// Why a function's graph was not drawn.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotDrawn {
    /// It has more blocks than a picture draws.
    #[error("{0} blocks: more than the {DRAWN_AT_MOST} a picture draws")]
    TooLarge(usize),
    /// It has no flow to draw.
    #[error("it has no flow: {0}")]
    Raw(String),
    /// The layout failed (the crate panicked).
    #[error("the layout failed: {0}")]
    Layout(String),
}

const FONT: usize = 14;

/// A block's fill: white at no flow, red at the function's most.
fn fill(flow: u64, most: u64) -> Color {
    let heat = if most == 0 {
        0.0
    } else {
        flow as f64 / most as f64
    };
    let fade = |full: u32, none: u32| -> u32 {
        let v = f64::from(none) + (f64::from(full) - f64::from(none)) * heat;
        v.round().clamp(0.0, 255.0) as u32
    };
    let (r, g, b) = (fade(0xE0, 0xFF), fade(0x31, 0xFF), fade(0x31, 0xFF));
    Color::new((r << 24) | (g << 16) | (b << 8) | 0xFF)
}

fn label(b: &CfgBlock) -> String {
    let flow = b.flow.unwrap_or(0);
    match b.observed {
        Some(seen) => format!("{}  0x{:X}\nflow {flow}  seen {seen}", b.id, b.rva),
        None => format!("{}  0x{:X}\nflow {flow}  not seen", b.id, b.rva),
    }
}

/// The SVG picture of `f`'s graph.
pub(crate) fn svg(f: &FunctionCfg) -> Result<String, NotDrawn> {
    if let Some(why) = &f.raw {
        return Err(NotDrawn::Raw(why.clone()));
    }
    if f.blocks.len() > DRAWN_AT_MOST {
        return Err(NotDrawn::TooLarge(f.blocks.len()));
    }
    let drawn = guarded(|| draw(f)).map_err(|e| NotDrawn::Layout(e.to_string()))?;
    Ok(drawn)
}

fn draw(f: &FunctionCfg) -> String {
    let most = f.blocks.iter().filter_map(|b| b.flow).max().unwrap_or(0);
    let most_edge = f.edges.iter().filter_map(|e| e.flow).max().unwrap_or(0);
    let mut graph = VisualGraph::new(Orientation::TopToBottom);
    let node = |graph: &mut VisualGraph, shape: ShapeKind, look: StyleAttr| {
        let size = layout::std_shapes::render::get_shape_size(
            Orientation::TopToBottom,
            &shape,
            FONT,
            false,
        );
        graph.add_node(Element::create(shape, look, Orientation::TopToBottom, size))
    };
    let plain = StyleAttr::new(Color::fast("black"), 1, Some(Color::fast("white")), 0, FONT);
    let entry = node(&mut graph, ShapeKind::new_circle("entry"), plain.clone());
    let blocks: Vec<_> = f
        .blocks
        .iter()
        .map(|b| {
            let flow = b.flow.unwrap_or(0);
            let cold = flow > 0 && b.observed.is_none();
            let (border, width) = match cold {
                true => (Color::fast("#1971c2"), 4),
                false => (Color::fast("black"), 1),
            };
            let look = StyleAttr::new(border, width, Some(fill(flow, most)), 4, FONT);
            node(&mut graph, ShapeKind::new_box(&label(b)), look)
        })
        .collect();
    let exit = node(&mut graph, ShapeKind::new_circle("exit"), plain);
    for e in &f.edges {
        let from = e.from.map_or(entry, |id| blocks[id as usize - 1]);
        let to = e.to.map_or(exit, |id| blocks[id as usize - 1]);
        let flow = e.flow.unwrap_or(0);
        let width = match most_edge {
            0 => 1,
            most => 1 + (3 * u128::from(flow) / u128::from(most)) as usize,
        };
        let color = if flow == 0 { "#adb5bd" } else { "#343a40" };
        let look = StyleAttr::new(Color::fast(color), width, None, 0, FONT - 2);
        let style = if flow == 0 {
            LineStyleKind::Dashed
        } else {
            LineStyleKind::Normal
        };
        let text = flow.to_string();
        let arrow = Arrow::new(
            LineEndKind::None,
            LineEndKind::Arrow,
            style,
            &text,
            &look,
            &None,
            &None,
        );
        graph.add_edge(arrow, from, to);
    }
    let mut svg = SVGWriter::new();
    graph.do_it(false, false, false, &mut svg);
    svg.finalize()
}
