// The time in three zones at once, and one conversion (time server; typed structured values).
const zones = ["Europe/Paris", "Asia/Tokyo", "America/New_York"];
const now = await Promise.all(zones.map((timezone) => tools.time_get_current_time({ timezone })));
const converted = await tools.time_convert_time({
  source_timezone: "Europe/Paris",
  time: "12:00",
  target_timezone: "Asia/Tokyo",
});
const at = converted.target.datetime.slice(11, 16);
// 20:00 in winter, 19:00 when Paris keeps summer time (Tokyo has none).
return {
  zones: now.map((r) => r.timezone),
  noonInParisIsEveningInTokyo: ["19:00", "20:00"].includes(at),
};
