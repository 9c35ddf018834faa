//! The command-line interface definition (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// modelc: a compiler and toolchain for the .cf infrastructure modelling language.
#[derive(Debug, Parser)]
#[command(name = "modelc", version, about, propagate_version = true)]
pub struct Cli {
    /// When to colour diagnostics. `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// How to print diagnostics: `human` on stderr, or a JSON array on stdout.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check the syntax of .cf files (no name resolution or types).
    Parse {
        /// The files to parse.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print each file's syntax tree to stdout.
        #[arg(long)]
        dump_ast: bool,
    },
    /// Check a model: a .cf file, or a project directory (with project.yml). Without PATH,
    /// the nearest project.yml above the current directory is used.
    Check {
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// Compile a model: check it, then execute it to find every instance. Prints what
    /// `std::print` printed (stdout) and a summary of the instances by type (stderr).
    Compile {
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print every instance with its attribute values to stdout.
        #[arg(long)]
        dump_instances: bool,
    },
    /// Explain a diagnostic code, e.g. `modelc explain E0006`.
    Explain {
        #[arg(value_name = "CODE")]
        code: String,
    },
    /// Print a shell completion script, e.g. `modelc completions bash > /etc/bash_completion.d/modelc`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}
