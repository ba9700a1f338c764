// Placeholder: replaced by the loom implementation.
namespace loom {}
