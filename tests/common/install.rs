//! How each host gets Windlass, as the README tells a user to install it:
//! Claude Code's, Codex's and Copilot CLI's plugins from this repository's
//! marketplaces, Gemini CLI's and Qwen Code's extensions linked from its
//! root, OpenCode's plugin module and MCP server named in its user
//! configuration; each with the settings that keep a host at home (no
//! update checks, telemetry or sign-in).

use super::host::{Host, Installed, model_name, repository};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// Copilot CLI unpacks its package (235 MB) into a new HOME's cache on
/// first start: the hosts' HOMEs share one, filled by one setup at a time.
static COPILOT_CACHE: Mutex<()> = Mutex::new(());

impl Installed {
    /// Codex's configuration (the scripted model's provider, no update
    /// checks or analytics), then `codex plugin marketplace add REPO &&
    /// codex plugin add windlass@windlass`, as the README says.
    pub(super) fn install_codex_plugin(&self) {
        let codex = self.daemon.home().join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        let config = format!(
            "model = \"{}\"\nmodel_provider = \"scripted\"\ncheck_for_update_on_startup = false\n\n\
             [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\
             env_key = \"SCRIPTED_API_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\
             stream_max_retries = 0\n\n[analytics]\nenabled = false\n",
            model_name(Host::Codex)
        );
        std::fs::write(codex.join("config.toml"), config).unwrap();
        let repository = repository().display().to_string();
        self.setup(&["plugin", "marketplace", "add", &repository], &repository);
        self.setup(&["plugin", "add", "windlass@windlass"], &repository);
    }

    /// `copilot plugin marketplace add REPO && copilot plugin install
    /// windlass@windlass`: Copilot CLI installs the Claude Code plugin.
    pub(super) fn install_copilot_plugin(&self) {
        let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::create_dir_all(self.daemon.home().join(".cache")).unwrap();
        std::os::unix::fs::symlink(&shared, self.daemon.home().join(".cache/copilot")).unwrap();
        let _one_at_a_time = COPILOT_CACHE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let repository = repository().display().to_string();
        self.setup(&["plugin", "marketplace", "add", &repository], &repository);
        self.setup(&["plugin", "install", "windlass@windlass"], &repository);
    }

    /// `opencode plugin -g file:REPO/plugins/opencode`, as the README
    /// says: the plugin module, which brings Windlass's MCP server. The
    /// plugin package OpenCode installs into its configuration directory
    /// comes from `.ci/run`'s copy when there is one
    /// (`WINDLASS_OPENCODE_DEPS`).
    pub(super) fn configure_opencode(&self) {
        let directory = self.daemon.home().join(".config/opencode");
        std::fs::create_dir_all(&directory).unwrap();
        if let Some(deps) = std::env::var_os("WINDLASS_OPENCODE_DEPS") {
            let deps = PathBuf::from(deps);
            for name in ["package.json", "package-lock.json"] {
                std::fs::copy(deps.join(name), directory.join(name)).unwrap();
            }
            let copied = Command::new("cp")
                .arg("-r")
                .arg(deps.join("node_modules"))
                .arg(&directory)
                .status()
                .unwrap();
            assert!(copied.success(), "copying OpenCode's plugin package");
        }
        let module = format!("file:{}", repository().join("plugins/opencode").display());
        let repository = repository().display().to_string();
        self.setup(&["plugin", "-g", &module], &repository);
    }

    /// Qwen Code's settings (nothing sent home), then `qwen extensions link
    /// REPO`, answering its question.
    pub(super) fn link_qwen_extension(&self) {
        let qwen = self.daemon.home().join(".qwen");
        std::fs::create_dir_all(&qwen).unwrap();
        let settings = json!({
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false},
        });
        std::fs::write(qwen.join("settings.json"), settings.to_string()).unwrap();
        let repository = repository().display().to_string();
        let mut command = self.command(None);
        command
            .args(["extensions", "link", &repository])
            .current_dir(&repository)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(b"y\n").unwrap();
        let output = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && said.contains("linked successfully"),
            "qwen extensions link: {said}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `claude plugin marketplace add REPO && claude plugin install
    /// windlass@windlass`, as the README says.
    pub(super) fn install_plugin(&self) {
        let repository = repository().display().to_string();
        self.setup(&["plugin", "marketplace", "add", &repository], &repository);
        self.setup(&["plugin", "install", "windlass@windlass"], &repository);
    }

    /// Gemini CLI's settings (API-key auth, nothing sent home, no update
    /// checks), the folders it must trust (it installs nothing into an
    /// untrusted one, silently), then `gemini extensions link REPO`:
    /// `install` would copy the repository, `target/` and all.
    pub(super) fn link_extension(&self, projects: &[&Path]) {
        let gemini = self.daemon.home().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        });
        std::fs::write(gemini.join("settings.json"), settings.to_string()).unwrap();
        let trusted: serde_json::Map<String, Value> = projects
            .iter()
            .map(|path| path.to_path_buf())
            .chain([repository()])
            .map(|path| (path.display().to_string(), json!("TRUST_FOLDER")))
            .collect();
        std::fs::write(
            gemini.join("trustedFolders.json"),
            Value::Object(trusted).to_string(),
        )
        .unwrap();
        let repository = repository().display().to_string();
        self.setup(
            &["extensions", "link", &repository, "--consent"],
            &repository,
        );
    }
}
