//! The pipeline's last stage: the outputs written to the project, those whose file holds them
//! already (by the incremental layer's stamps) left alone, all at once through the scaffold.

use std::path::Path;

use super::emit::Outputs;
use super::incremental::Incremental;
use crate::error::Result;
use crate::printer::Printer;
use crate::scaffold::{IfExists, Scaffold};

/// Writes the outputs that changed, and tells the layer what each output's file now holds.
/// Returns each output (relative to the project root) with the layer's key of its text.
pub(crate) fn write(
    root: &Path,
    outputs: Outputs,
    layer: &dyn Incremental,
    printer: &Printer,
) -> Result<Vec<(String, u128)>> {
    let mut scaffold = Scaffold::new(root);
    // an output whose stamp says the file holds it already is not read back
    let mut checked = Vec::new();
    let mut written = Vec::new();
    for (rel, text) in outputs {
        let key = layer.output_key(&text);
        written.extend(key.map(|k| (rel.clone(), k)));
        if let Some(k) = key
            && layer.unchanged(&root.join(&rel), k)
        {
            continue;
        }
        checked.extend(key.map(|k| (root.join(&rel), k)));
        scaffold.file(&rel, text, IfExists::Overwrite)?;
    }
    scaffold.commit(printer)?;
    for (path, key) in &checked {
        layer.holds(path, *key);
    }
    Ok(written)
}
