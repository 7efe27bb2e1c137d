//! Tables
