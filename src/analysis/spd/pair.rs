//! An SPD beside another of its binary (`spddump /compare OLD NEW`, docs/output.md, "An
//! SPD beside an SPD"): functions matched by hash, of the same shape when their checksum
//! (`rec+18`, inferred) is equal, then compared on shares of the SPDs' own dynamic
//! instructions (block count × instructions) over their emitted functions.
//!
//! ```text
//! function_overlap = Σ_f min(P_f, Q_f)             over the functions in both
//! block_overlap    = Σ_b min(p_b, q_b)             over the blocks of same-shape functions,
//!                                                  matched by id
//! changed_share_old = Σ P_f over changed functions: the old profile that no longer fits
//! ```

use std::collections::HashMap;

use crate::image::spdprofile::SpdProfile;

/// What became of a function from OLD to NEW.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Status {
    /// In both, with the same checksum: the same flow graph; its blocks are matched by id.
    Same,
    /// In both, with another checksum: the old profile no longer fits its code.
    Changed,
    /// In OLD only.
    OnlyOld,
    /// In NEW only.
    OnlyNew,
}

impl Status {
    /// `same`, `changed`, `only_old`, `only_new`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Same => "same",
            Status::Changed => "changed",
            Status::OnlyOld => "only_old",
            Status::OnlyNew => "only_new",
        }
    }
}

/// Two SPDs compared.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdPairReport {
    /// OLD's function records.
    pub functions_old: usize,
    /// NEW's.
    pub functions_new: usize,
    /// Functions in both (by hash).
    pub both: usize,
    /// Of those, with the same checksum.
    pub same_shape: usize,
    /// Of those, with another.
    pub changed: usize,
    /// Functions in OLD only.
    pub only_old: usize,
    /// Functions in NEW only.
    pub only_new: usize,
    /// OLD's dynamic instructions over its emitted functions (inferred).
    pub total_old: u128,
    /// NEW's.
    pub total_new: u128,
    /// Σ min of the two function shares.
    pub function_overlap: f64,
    /// Σ min of the two block shares, over same-shape functions' blocks.
    pub block_overlap: f64,
    /// OLD's share on functions that changed shape.
    pub changed_share_old: f64,
    /// The functions with weight on either side, before `top` cut them.
    pub functions: usize,
    /// The functions whose share moved most, first.
    pub rows: Vec<SpdPairFunction>,
}

/// One function of either SPD.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdPairFunction {
    /// Its hash.
    pub hash: u64,
    /// Its name (NEW's, when NEW has it).
    pub name: String,
    /// What became of it.
    pub status: Status,
    /// Its share of OLD's dynamic instructions.
    pub old_share: f64,
    /// Of NEW's.
    pub new_share: f64,
    /// NEW's share less OLD's.
    pub delta: f64,
    /// Its entry count in OLD, when OLD has it.
    pub old_entry: Option<u64>,
    /// In NEW.
    pub new_entry: Option<u64>,
    /// The overlap of its blocks within it, when it has the same shape and weight on both
    /// sides.
    pub shape_overlap: Option<f64>,
}

/// Each function's weight (Σ its blocks' count × instructions) and the total, by its place
/// in record order.
fn weights(spd: &SpdProfile) -> (Vec<u128>, u128) {
    let blocks = spd.blocks.all();
    let mut per = vec![0u128; spd.functions.len()];
    let mut total = 0u128;
    for b in blocks {
        let w = b.weight();
        if let Some(f) = per.get_mut(b.function as usize) {
            *f = f.saturating_add(w);
        }
        total = total.saturating_add(w);
    }
    (per, total)
}

/// `n / total`, 0 of nothing.
fn fraction(n: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64
    }
}

impl SpdPairReport {
    /// The report of OLD beside NEW before any function is compared: their counts and
    /// totals.
    fn empty(old: &SpdProfile, new: &SpdProfile, (total_old, total_new): (u128, u128)) -> Self {
        SpdPairReport {
            functions_old: old.functions.len(),
            functions_new: new.functions.len(),
            both: 0,
            same_shape: 0,
            changed: 0,
            only_old: 0,
            only_new: 0,
            total_old,
            total_new,
            function_overlap: 0.0,
            block_overlap: 0.0,
            changed_share_old: 0.0,
            functions: 0,
            rows: Vec::new(),
        }
    }
}

/// OLD beside NEW, with at most `top` functions.
pub fn compare(old: &SpdProfile, new: &SpdProfile, top: usize) -> SpdPairReport {
    let (old_w, old_total) = weights(old);
    let (new_w, new_total) = weights(new);
    let in_new: HashMap<u64, usize> = (new.functions.iter().enumerate())
        .map(|(i, f)| (f.hash, i))
        .collect();
    let mut report = SpdPairReport::empty(old, new, (old_total, new_total));
    let mut matched = vec![false; new.functions.len()];
    for (i, f) in old.functions.iter().enumerate() {
        let p = fraction(old_w[i], old_total);
        let Some(&j) = in_new.get(&f.hash) else {
            report.only_old += 1;
            report
                .rows
                .push(row(f.hash, &f.name, Status::OnlyOld, (p, 0.0)));
            report.rows.last_mut().expect("pushed").old_entry = Some(f.entry);
            continue;
        };
        matched[j] = true;
        let g = &new.functions[j];
        let q = fraction(new_w[j], new_total);
        report.both += 1;
        report.function_overlap += p.min(q);
        let status = match f.checksum == g.checksum {
            true => Status::Same,
            false => Status::Changed,
        };
        let mut r = row(f.hash, &g.name, status, (p, q));
        (r.old_entry, r.new_entry) = (Some(f.entry), Some(g.entry));
        if status == Status::Same {
            report.same_shape += 1;
            let (overlap, within) = blocks_overlap(old, new, (i, j), (old_total, new_total));
            report.block_overlap += overlap;
            r.shape_overlap = within;
        } else {
            report.changed += 1;
            report.changed_share_old += p;
        }
        report.rows.push(r);
    }
    for (j, g) in new.functions.iter().enumerate() {
        if !matched[j] {
            report.only_new += 1;
            let q = fraction(new_w[j], new_total);
            report
                .rows
                .push(row(g.hash, &g.name, Status::OnlyNew, (0.0, q)));
            report.rows.last_mut().expect("pushed").new_entry = Some(g.entry);
        }
    }
    report
        .rows
        .retain(|r| r.old_share > 0.0 || r.new_share > 0.0);
    report.rows.sort_by(|a, b| {
        b.delta
            .abs()
            .total_cmp(&a.delta.abs())
            .then(
                b.old_share
                    .max(b.new_share)
                    .total_cmp(&a.old_share.max(a.new_share)),
            )
            .then_with(|| a.name.cmp(&b.name))
            .then(a.hash.cmp(&b.hash))
    });
    report.functions = report.rows.len();
    report.rows.truncate(top);
    report
}

/// A function's row, with its two shares.
fn row(
    hash: u64,
    name: &str,
    status: Status,
    (old_share, new_share): (f64, f64),
) -> SpdPairFunction {
    SpdPairFunction {
        hash,
        name: name.to_owned(),
        status,
        old_share,
        new_share,
        delta: new_share - old_share,
        old_entry: None,
        new_entry: None,
        shape_overlap: None,
    }
}

/// The blocks of a same-shape function, matched by id: Σ min(p_b, q_b) over them, and the
/// overlap within the function (its blocks' shares renormalised), when both sides weigh
/// something in it.
fn blocks_overlap(
    old: &SpdProfile,
    new: &SpdProfile,
    (i, j): (usize, usize),
    (old_total, new_total): (u128, u128),
) -> (f64, Option<f64>) {
    let (a, b) = (old.blocks.all(), new.blocks.all());
    let (mine, theirs) = (&a[old.blocks.of_function(i)], &b[new.blocks.of_function(j)]);
    let (p_f, q_f) = (
        mine.iter().map(|b| b.weight()).sum::<u128>(),
        theirs.iter().map(|b| b.weight()).sum::<u128>(),
    );
    let (mut overlap, mut within) = (0.0, 0.0);
    for block in mine {
        // In id order, each id once (the reader checks a function's ids run 1..n).
        let Ok(at) = theirs.binary_search_by_key(&block.id, |b| b.id) else {
            continue;
        };
        let (v, w) = (block.weight(), theirs[at].weight());
        overlap += fraction(v, old_total).min(fraction(w, new_total));
        within += fraction(v, p_f).min(fraction(w, q_f));
    }
    (overlap, (p_f > 0 && q_f > 0).then_some(within))
}
