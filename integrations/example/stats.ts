/** State shared by this integration's files (one module instance per server process). */
export const stats = { responsesSeen: 0 }
