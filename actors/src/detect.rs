//! Start-up detection: which configured servers the files in the roots
//! need, and a file of each one's language to open first. A pure walk of
//! the roots, run by the Supervisor off its thread as a session's roots
//! arrive or change; it owns no state and belongs to no actor.

use crate::language::{self, ServerSpec};
use crate::tsconfig::Projects;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What start-up detection found in the roots.
#[derive(Debug, Default)]
pub struct Detection {
    /// The configured servers the files need.
    pub needed: Vec<String>,
    /// For each needed server, a file of its language to open first:
    /// servers such as clangd and tsserver load a project only once one of
    /// its files is open.
    pub probes: Vec<(String, DocumentSnapshot)>,
}

/// How many files detection looks at before it stops.
const DETECTION_FILE_LIMIT: usize = 5_000;

/// The configured servers that the files in the roots need, judged from
/// at most [`DETECTION_FILE_LIMIT`] files, each with a file to open first.
/// A server limited to some files (`file_patterns`, or a linter's
/// configuration files beside them) is needed only when one of them is
/// there, and opens one of them.
pub fn detect_servers(roots: &RootSet, specs: &[ServerSpec]) -> Detection {
    let files = source_files(roots);
    let languages: BTreeSet<&str> = files.iter().map(|file| file.language).collect();
    // The shallowest source file (not a header) of each language.
    let mut samples: HashMap<&'static str, &Found> = HashMap::new();
    for file in files.iter().filter(|file| file.alone) {
        let shallower = samples
            .get(file.language)
            .is_none_or(|known| file.depth < known.depth);
        if shallower {
            samples.insert(file.language, file);
        }
    }
    // A server of data languages alone waits for a question in a project
    // with code for another to serve: a `pyrightconfig.json` is no reason
    // to run a JSON server beside pyright.
    let code_served = specs.iter().any(|spec| serves_code(spec, &languages));
    let mut detection = Detection::default();
    for spec in specs {
        let limited = spec.duties.file_matcher().ok().flatten();
        let config_files = spec.duties.config_files;
        let probe = if limited.is_none() && config_files.is_empty() {
            if !languages.iter().any(|language| spec.serves(language)) {
                continue;
            }
            let sample = spec
                .languages
                .iter()
                .find_map(|language| samples.get(language.as_str()))
                .map(|file| &file.path);
            match spec.projects_from_tsconfig {
                true => project_file(spec, &files).or(sample),
                false => sample,
            }
        } else {
            let configured = configured_directories(&files, config_files);
            let mut taken = files
                .iter()
                .filter(|file| {
                    spec.serves(file.language)
                        && limited.as_ref().is_none_or(|set| set.is_match(&file.path))
                        && (config_files.is_empty()
                            || configured.iter().any(|dir| file.path.starts_with(dir)))
                })
                .peekable();
            if taken.peek().is_none() {
                continue;
            }
            taken
                .filter(|file| file.alone)
                .min_by_key(|file| file.depth)
                .map(|file| &file.path)
        };
        if !serves_code(spec, &languages) && code_served {
            continue;
        }
        detection.needed.push(spec.name.clone());
        if let Some(probe) =
            probe.and_then(|path| DocumentSnapshot::read(path, language::language_id(path)).ok())
        {
            detection.probes.push((spec.name.clone(), probe));
        }
    }
    detection
}

/// The shallowest source file of `spec`'s that a `tsconfig.json` puts in
/// its project: the shallowest of all may be a script beside the project
/// (a `Gruntfile.js`), and tsserver would load the project of the file
/// opened first rather than the one the agent asks about.
fn project_file<'a>(spec: &ServerSpec, files: &'a [Found]) -> Option<&'a PathBuf> {
    let mut projects = Projects::default();
    let mut served: Vec<&Found> = files
        .iter()
        .filter(|file| file.alone && spec.serves(file.language))
        .collect();
    served.sort_by_key(|file| file.depth);
    served
        .into_iter()
        .find(|file| projects.hold(&file.path))
        .map(|file| &file.path)
}

/// Whether `spec` serves a language of program code found in the roots.
fn serves_code(spec: &ServerSpec, found: &BTreeSet<&str>) -> bool {
    found
        .iter()
        .any(|language| spec.serves(language) && !language::is_data(language))
}

/// The directories holding one of a linter's configuration files among
/// the files found.
fn configured_directories<'a>(files: &'a [Found], names: &[&str]) -> Vec<&'a Path> {
    files
        .iter()
        .filter(|file| {
            file.path
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| names.contains(&name))
        })
        .filter_map(|file| file.path.parent())
        .collect()
}

/// A source file found in the roots.
struct Found {
    path: PathBuf,
    depth: usize,
    /// Its own language.
    language: &'static str,
    /// Whether that is its only candidate (a header's is not).
    alone: bool,
}

fn source_files(roots: &RootSet) -> Vec<Found> {
    let mut found = Vec::new();
    for root in roots.roots() {
        let files = ignore::WalkBuilder::new(&root.path)
            .build()
            .filter_map(std::result::Result::ok)
            .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
            .take(DETECTION_FILE_LIMIT);
        for entry in files {
            let candidates = language::candidate_languages(entry.path());
            let Some(language) = candidates.first().copied() else {
                continue;
            };
            found.push(Found {
                depth: entry.depth(),
                language,
                alone: candidates.len() == 1,
                path: entry.into_path(),
            });
        }
    }
    found
}
