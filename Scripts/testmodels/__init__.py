"""Reference test-model generator for SwiftTFLite (see README, Regenerating TestModels)."""
