"""ringrl from Python: the maze envs in Gymnasium's API, the BF scorer, run directories and
checkpoints, over the same torch-free C++ that the `ringrl` command line uses (docs/python.md).

    import gymnasium as gym, ringrl
    env = gym.make("ringrl/AntMaze-v0")
    envs = ringrl.make_vec("ant-maze", num_envs=4, seed=0)
    ringrl.bf.score(["+.", ",[.,]"], "reverse")
    run = ringrl.runs.open("runs/hiro-km")
    ckpt = ringrl.checkpoint.load("runs/hiro-km/model-rep0.ckpt")
"""

from ringrl._ringrl import CorruptDataError
from ringrl import bf, checkpoint, envs, hiro, runs
from ringrl.envs import MazeEnv, VecMazeEnv, env_names, make, make_vec, register_envs

__all__ = [
    "CorruptDataError",
    "MazeEnv",
    "VecMazeEnv",
    "bf",
    "checkpoint",
    "env_names",
    "envs",
    "hiro",
    "make",
    "make_vec",
    "register_envs",
    "runs",
]

register_envs()
