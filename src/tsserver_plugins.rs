//! Servers that answer through a tsserver plugin (Vue's; see
//! `BuiltIn::tsserver_plugin`), made whole when the configuration is
//! resolved. Each runs the TypeScript of the `tsserver` on PATH
//! (`--tsdk`), and the configuration's typescript-language-server loads
//! the plugin from the server's own package and serves its languages
//! before it: so the LanguageServer actor's relay of the server's
//! `tsserver/request`s has a TypeScript server to ask, and TypeScript's
//! answers (types, definitions, type errors in templates) come first.

use crate::config::{find_on_path, known_as, runs_same_program};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use windlass_actors::language::ServerSpec;

const TYPESCRIPT_SERVER: &str = "typescript-language-server";

/// `specs` with every server that answers through a tsserver plugin
/// given its TypeScript, or left out when it has none, and its plugin
/// loaded by the TypeScript server, if there is one.
pub fn load_plugins(mut specs: Vec<ServerSpec>) -> Vec<ServerSpec> {
    let mut index = 0;
    while index < specs.len() {
        let Some(plugin) = plugin_of(&specs[index]) else {
            index += 1;
            continue;
        };
        if !give_typescript(&mut specs[index]) {
            tracing::warn!(
                server = %specs[index].name,
                "left out: it needs TypeScript's tsserver on PATH (npm install -g typescript@5)"
            );
            specs.remove(index);
            continue;
        }
        index = load_in_typescript_server(&mut specs, index, plugin) + 1;
    }
    specs
}

/// The tsserver plugin a server answers through, if it is one that does.
fn plugin_of(spec: &ServerSpec) -> Option<&'static str> {
    known_as(&spec.name, &spec.command).find_map(|known| known.tsserver_plugin)
}

/// Adds `--tsdk` for the TypeScript on PATH unless the configuration
/// names one; false when there is none.
fn give_typescript(spec: &mut ServerSpec) -> bool {
    if spec.args.iter().any(|arg| arg.starts_with("--tsdk")) {
        return true;
    }
    let Some(library) = find_on_path("tsserver").and_then(|tsserver| typescript_library(&tsserver))
    else {
        return false;
    };
    spec.args.push(format!("--tsdk={}", library.display()));
    true
}

/// The `lib` directory of the TypeScript package whose `bin/tsserver`
/// this is.
fn typescript_library(tsserver: &Path) -> Option<PathBuf> {
    let library = package_of(tsserver)?.join("lib");
    library.join("typescript.js").is_file().then_some(library)
}

/// Has the first typescript-language-server of the configuration load
/// `plugin` from the package of the server at `index`, serve its
/// languages, and come before it. Returns where that server is now.
fn load_in_typescript_server(specs: &mut Vec<ServerSpec>, index: usize, plugin: &str) -> usize {
    let Some(location) = find_on_path(&specs[index].command).and_then(|bin| package_of(&bin))
    else {
        return index;
    };
    let Some(typescript) = specs
        .iter()
        .position(|spec| runs_same_program(&spec.command, TYPESCRIPT_SERVER))
    else {
        return index;
    };
    let languages = specs[index].languages.clone();
    let server = &mut specs[typescript];
    add_plugin(server, plugin, &location, &languages);
    for language in languages {
        if !server.serves(&language) {
            server.languages.push(language);
        }
    }
    if typescript < index {
        return index;
    }
    let server = specs.remove(typescript);
    specs.insert(index, server);
    index + 1
}

/// The npm package a binary is the `bin/` script of, through the link
/// npm puts on PATH.
fn package_of(binary: &Path) -> Option<PathBuf> {
    let package = binary
        .canonicalize()
        .ok()?
        .parent()?
        .parent()?
        .to_path_buf();
    package.join("package.json").is_file().then_some(package)
}

/// Adds the plugin to typescript-language-server's `plugins` option,
/// unless the configuration already names it.
fn add_plugin(server: &mut ServerSpec, plugin: &str, location: &Path, languages: &[String]) {
    let options = server
        .initialization_options
        .get_or_insert_with(|| Value::Object(Default::default()));
    let Some(options) = options.as_object_mut() else {
        return;
    };
    let plugins = options
        .entry("plugins")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(plugins) = plugins.as_array_mut() else {
        return;
    };
    if plugins
        .iter()
        .any(|loaded| loaded.get("name").and_then(Value::as_str) == Some(plugin))
    {
        return;
    }
    plugins.push(json!({
        "name": plugin,
        "location": location,
        "languages": languages,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use windlass_actors::language::{Duties, Role, WhileLoading};

    fn spec(name: &str, command: &str, languages: &[&str]) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: command.into(),
            args: vec!["--stdio".into()],
            languages: languages
                .iter()
                .map(|language| (*language).into())
                .collect(),
            initialization_options: None,
            settings: json!({}),
            check: None,
            pull_diagnostics: false,
            references_from: windlass_actors::language::ReferencesFrom::Project,
            checks_only_what_changed: false,
            rests_after_input: None,
            lints_each_file_alone: false,
            misses_added_folders: false,
            forgets_early_documents: false,
            rebuilds_only_when_forced: false,
            reads_includes_from_disk: false,
            reads_disk_only_at_start: false,
            references_one_at_a_time: false,
            while_loading: WhileLoading::Waits,
            save_check_sources: Vec::new(),
            projects_from_tsconfig: false,
            tsserver_commands: false,
            duties: Duties::of(Role::Language),
        }
    }

    #[test]
    fn the_typescript_server_loads_a_plugin_once_beside_the_options_given() {
        let mut server = spec("typescript", TYPESCRIPT_SERVER, &["typescript"]);
        server.initialization_options = Some(json!({"preferences": {"quoteStyle": "single"}}));
        let location = Path::new("/npm/@vue/language-server");
        add_plugin(
            &mut server,
            "@vue/typescript-plugin",
            location,
            &["vue".into()],
        );
        add_plugin(
            &mut server,
            "@vue/typescript-plugin",
            location,
            &["vue".into()],
        );
        assert_eq!(
            server.initialization_options,
            Some(json!({
                "preferences": {"quoteStyle": "single"},
                "plugins": [{
                    "name": "@vue/typescript-plugin",
                    "location": "/npm/@vue/language-server",
                    "languages": ["vue"],
                }],
            }))
        );
        assert!(server.loads_tsserver_plugins());
    }

    #[test]
    fn a_tsdk_the_configuration_gives_is_kept() {
        let mut vue = spec("vue", "vue-language-server", &["vue"]);
        vue.args.push("--tsdk=/opt/typescript/lib".into());
        assert!(give_typescript(&mut vue));
        assert_eq!(vue.args, ["--stdio", "--tsdk=/opt/typescript/lib"]);
    }

    #[test]
    fn servers_without_a_plugin_are_left_as_they_are() {
        let specs = vec![
            spec("typescript", TYPESCRIPT_SERVER, &["typescript"]),
            spec("python", "pyright-langserver", &["python"]),
        ];
        assert_eq!(load_plugins(specs.clone()), specs);
    }
}
