"""The content plumbing of the ground floor: canonical YAML loading (`loading`), the
content revision every committed write moves (`revision`, `changes`) and the
whole-page cache keyed by it (`page_cache`)."""
