// Placeholder translation unit until the compute backends land.
namespace akview {}
