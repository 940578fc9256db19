// Seats given up and games that never stall (issue 20), as both games' pages show them: a seat
// the greedy bot plays (resigned, or taken over because it stalled the game), the log lines of
// seat_left, seat_taken_over and game_cancelled, and a cancelled game's phase.

export const CANCELLED = "Cancelled — its seats did not fill in time";

/** The label of a seat the greedy bot plays for its person, or null. */
export function takenOverText(seat) {
  if (seat?.taken_over === "resigned") return "resigned · greedy bot plays";
  if (seat?.taken_over === "stalled") return "stalled · greedy bot plays";
  return null;
}

/** A log line for a lifecycle event of issue 20, or null for any other event. */
export function lifecycleLine(record, nameOf) {
  const d = record?.data || {};
  switch (record?.type) {
    case "seat_left":
      return `${d.name} left seat ${d.seat + 1}: it is free again`;
    case "seat_taken_over":
      return d.reason === "resigned"
        ? `${nameOf(d.seat)} resigned: the greedy bot plays the seat from now on`
        : `${nameOf(d.seat)} did not move for too long: the greedy bot plays the seat from now on`;
    case "game_cancelled":
      return "The game was cancelled: its seats did not fill in time";
    default:
      return null;
  }
}
