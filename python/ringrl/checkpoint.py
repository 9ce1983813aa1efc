from ringrl import _ringrl
