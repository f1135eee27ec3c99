// Placeholder: this module is filled in by the issues that build it.
