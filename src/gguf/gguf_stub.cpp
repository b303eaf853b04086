// Placeholder so the library is never empty; remove when real sources exist.
