/** The messaging bridge: an iMessage-style chat server (the BlueBubbles API) in and out. */
export const id = "msgbridge"
export const name = "Messaging bridge"
export const version = "1.0.0"
