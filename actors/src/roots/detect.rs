//! Start-up detection: which configured servers the files in the roots
//! need, and a file of each one's language to open first.

use crate::language::{self, ServerSpec};
use crate::messages::roots::Detection;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

/// How many files detection looks at before it stops.
const DETECTION_FILE_LIMIT: usize = 5_000;

/// The configured servers that the files in the roots need, judged from
/// at most [`DETECTION_FILE_LIMIT`] files, each with a file to open first.
pub fn detect_servers(roots: &RootSet, specs: &[ServerSpec]) -> Detection {
    let mut languages = BTreeSet::new();
    // The shallowest source file (not a header) of each language.
    let mut samples: HashMap<&'static str, (usize, PathBuf)> = HashMap::new();
    for root in roots.roots() {
        let files = ignore::WalkBuilder::new(&root.path)
            .build()
            .filter_map(std::result::Result::ok)
            .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
            .take(DETECTION_FILE_LIMIT);
        for entry in files {
            let candidates = language::candidate_languages(entry.path());
            let Some(own) = candidates.first().copied() else {
                continue;
            };
            languages.insert(own);
            let shallower = samples
                .get(own)
                .is_none_or(|(depth, _)| entry.depth() < *depth);
            if candidates.len() == 1 && shallower {
                samples.insert(own, (entry.depth(), entry.into_path()));
            }
        }
    }
    let mut detection = Detection::default();
    for spec in specs {
        if !languages.iter().any(|language| spec.serves(language)) {
            continue;
        }
        detection.needed.push(spec.name.clone());
        let probe = spec
            .languages
            .iter()
            .find_map(|language| samples.get(language.as_str()))
            .and_then(|(_, path)| DocumentSnapshot::read(path).ok());
        if let Some(probe) = probe {
            detection.probes.push((spec.name.clone(), probe));
        }
    }
    detection
}
