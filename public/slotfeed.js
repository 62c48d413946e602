// slotfeed's one page script: see README, "Pages".
