#!/usr/bin/env bash
# Builds Scripts/GuideConsumer — a separate package that depends on this one by path, as an app
# does, and compiles the guides' snippets (Tests/FirebaseGuideTests/Snippets) with `import Firebase`
# in Swift 5 and Swift 6 language modes — then runs both executables against TestModels.
# Not part of `swift test`: it builds the whole runtime a second time (minutes on a small machine).
#   Scripts/check_guide_consumer.sh            # build directory: .build/guide-consumer
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${GUIDE_CONSUMER_BUILD:-$root/.build/guide-consumer}"
cd "$root/Scripts/GuideConsumer"
swift build --scratch-path "$scratch"
for target in GuideSwift5 GuideSwift6; do
  echo "== $target"
  "$scratch/debug/$target" "$root/TestModels"
done
echo "guide consumer: both language modes built and ran"
