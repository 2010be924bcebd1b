//! What may appear at the top of a writable tree as a *new* dot-entry. A list of agent and
//! editor configs ([`super::PROJECT`]) always trails the next agent (`.qwen`, `.factory` and
//! `.kilocode` were each missing once), so the top of each writable tree fails closed the
//! way `$HOME` does: a dot-entry that did not exist at launch may be made only if it is
//! named here, as data, a cache or the project's own build; below an unnamed one that
//! existed at launch nothing may be written. Names in [`super::PROJECT`] stay protected
//! whatever this list says (`.github/hooks` below an allowed `.github`): they are the floor.
//! The user names any other in `allowWrite` (`./.terraform`).
//!
//! Chosen from what real projects' builds and tests make (`scripts/workloads.py` records
//! every new top-level dot-entry of each run), plus the tools whose caches the issue that
//! asked for the rule named.

/// A dot-name allowed to appear at the top of a writable tree, and why nothing that starts
/// on opening the folder runs it.
#[derive(Debug, PartialEq, Eq)]
pub struct DotAllowed {
    /// One path component; `*` matches any run of characters.
    pub name: &'static str,
    /// Who makes it.
    pub tool: &'static str,
    /// What reads it back, and why that is data, a cache or the project's own build.
    pub why: &'static str,
    /// The names allowed directly inside it (`*` as in `name`); empty: all of it.
    pub inside: &'static [&'static str],
}

const fn a(name: &'static str, tool: &'static str, why: &'static str) -> DotAllowed {
    DotAllowed { name, tool, why, inside: &[] }
}

const CACHE: &str = "a cache its own tool reads back when the user runs it; nothing runs it on opening the folder";
const IGNORE: &str = "a list of names to skip: no program";
const VERSION: &str = "a version name; the version manager installs from its own sources";
const ENVS: &str =
    "environments the user's own test and run commands execute, as they execute the project's code; an editor that picks an interpreter there asks for workspace trust first";
const BUILD: &str = "build output the project's own dev server, build or tests read back";

#[rustfmt::skip]
pub const PROJECT_DOT_ALLOW: &[DotAllowed] = &[
    a(".git", "git", "its hooks, config and other files that run programs are guarded by srt's git rules"),
    // a forge's directory, by what the forge reads from it: Copilot CLI also loads MCP
    // servers (`mcp.json`) and settings (`copilot/`) from here, so those, and anything not
    // named, fail closed (round 7's second review)
    DotAllowed {
        name: ".github",
        tool: "GitHub",
        why: "CI workflows and actions run on the forge's runners, not this host; templates, ownership and instruction files are text",
        inside: &[
            "workflows", "actions", "ISSUE_TEMPLATE", "DISCUSSION_TEMPLATE", "PULL_REQUEST_TEMPLATE",
            "*.md", "CODEOWNERS", "FUNDING.yml", "dependabot.yml", "dependabot.yaml", "release.yml",
            "labeler.yml", "labels.yml", "renovate.json", "renovate.json5", "instructions", "linters",
        ],
    },
    a(".gitignore", "git", IGNORE),
    a(".gitkeep", "convention", "an empty placeholder"),
    a(".dockerignore", "docker", IGNORE),
    a(".npmignore", "npm", IGNORE),
    a(".prettierignore", "prettier", IGNORE),
    a(".eslintignore", "eslint", IGNORE),
    a(".node-version", "nodenv, fnm, volta", VERSION),
    a(".ruby-version", "rbenv, rvm", VERSION),
    a(".browserslistrc", "browserslist", "browser queries: data for the project's own build"),
    a(".env.*", "dotenv, Next.js, Vite", "data for the project's own code, as .env (whose limit docs/security.md states); no agent or shell loads these names by itself"),
    a(".yarnrc", "yarn v1", "the project's own build settings, as .yarnrc.yml"),
    a(".yarn", "yarn 2+", "its cache, the release and plugins the project vendors: the project's own build, as .yarnrc.yml's yarnPath"),
    a(".pnpm-store", "pnpm", CACHE),
    a(".npm", "npm (cache in the project)", CACHE),
    a(".cache", "parcel 1, gatsby, babel-loader, eslint, many more", CACHE),
    a(".venv", "python -m venv, uv, poetry (in-project)", ENVS),
    a(".tox", "tox", ENVS),
    a(".nox", "nox", ENVS),
    a(".eggs", "setuptools", "eggs of setup_requires for the project's own build"),
    a(".pytest_cache", "pytest", CACHE),
    a(".mypy_cache", "mypy", CACHE),
    a(".ruff_cache", "ruff", CACHE),
    a(".hypothesis", "hypothesis", "its example database, read back by the project's own tests"),
    a(".coverage", "coverage.py", "coverage data, read by coverage report"),
    a(".coverage.*", "coverage.py (parallel mode)", "coverage data, combined by coverage combine"),
    a(".nyc_output", "nyc, c8", "coverage data, read by their report"),
    a(".ipynb_checkpoints", "Jupyter", "copies of notebooks, opened only when the user asks"),
    a(".next", "Next.js", BUILD),
    a(".nuxt", "Nuxt", BUILD),
    a(".output", "Nuxt 3, Nitro", BUILD),
    a(".svelte-kit", "SvelteKit", BUILD),
    a(".angular", "Angular CLI", CACHE),
    a(".astro", "Astro", "generated type declarations"),
    a(".docusaurus", "Docusaurus", BUILD),
    a(".turbo", "Turborepo", CACHE),
    a(".parcel-cache", "Parcel 2", CACHE),
    a(".eslintcache", "eslint --cache", CACHE),
    a(".stylelintcache", "stylelint --cache", CACHE),
    a(".sass-cache", "Sass", CACHE),
    a(".gradle", "Gradle (project cache)", CACHE),
    a(".kotlin", "Kotlin 2 (project cache)", CACHE),
    a(".bundle", "bundler", "bundle config and installed gems of the project's own build"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_single_dot_components_and_none_is_protected() {
        for d in PROJECT_DOT_ALLOW {
            assert!(d.name.starts_with('.') && !d.name.contains('/'), "{}", d.name);
            assert!(super::super::well_formed(d.name), "{}", d.name);
            assert!(!d.tool.is_empty() && !d.why.is_empty(), "{}", d.name);
            // the floor wins anyway; listing a protected name here would only mislead
            let whole =
                super::super::PROJECT.iter().find(|e| super::super::covers(e.path, std::path::Path::new(d.name)));
            assert!(whole.is_none(), "{} is protected whole by {:?}", d.name, whole.map(|e| e.path));
        }
    }
}
