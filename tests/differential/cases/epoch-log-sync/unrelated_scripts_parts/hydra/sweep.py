"""A hyperparameter sweep of another experiment in the same repository, run with hydra's sweeper
(`python sweep.py --multirun`): it calls no `instantiate`, and its configuration names no
`_target_`, so it imports none of the repository's other scripts."""
import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def objective(cfg):
    return cfg.x ** 2 + cfg.y ** 2


if __name__ == "__main__":
    objective()
