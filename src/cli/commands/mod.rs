//! One file per subcommand: arguments in, library calls, text or JSON out.

pub mod check;
pub mod compare;
pub mod doctor;
pub mod explain;
pub mod fleet_table;
pub mod hosts;
pub mod lab;
pub mod learn;
pub mod list;
pub mod man;
pub mod report;
pub mod run;
pub mod runs;
pub mod stat;
pub mod suite;
pub mod tui;
pub mod verify;
